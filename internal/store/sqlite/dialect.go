package sqlite

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// dialect is SQLite's part of the shared queries.
type dialect struct{}

var _ sqlstore.Dialect = dialect{}

func (dialect) Engine() string { return "sqlite" }

// Rebind keeps ?: SQLite's own placeholder.
func (dialect) Rebind(query string) string { return query }

// Time writes the fixed-width text form, which sorts as time does.
func (dialect) Time(t time.Time) any { return sqlstore.FormatTime(t) }

// ByteOrder is a no-op: SQLite's default collation is already byte order.
func (dialect) ByteOrder(expr string) string { return expr }

func (dialect) Sentinel(err error) error {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return nil
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return store.ErrConflict
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return store.ErrNotFound
	}
	return nil
}

// ForUpdate is empty: the single writer connection, whose transactions
// BEGIN IMMEDIATE, already holds the whole database for the transaction.
func (dialect) ForUpdate(bool) string { return "" }

// BestChunks asks the FTS5 index for chunks holding any (or all) of the
// terms in the text column, each term quoted so that none is read as FTS5
// syntax (AND, NEAR, a column filter, a prefix *; the index's tokenizer
// still stems it), keeps those of the bases' sources (source_id, the index's
// own column), and ranks them by bm25 with only the text column weighted,
// negated: bm25 is lower for better matches. The bases are not part of the
// match: bm25 weighs each phrase of it by how rare it is, which it counts
// over the phrase's every row, and a base's token is in every chunk of the
// base. within bounds the ranked chunks to a range of rowids, up to the
// within-th that matches, which FTS5 seeks to.
func (dialect) BestChunks(orgID string, kbIDs, terms []string, all bool, within, limit int) (string, []any) {
	join := " OR "
	if all {
		join = " AND "
	}
	match := textMatch(terms, join)
	args := []any{match}
	bound := ""
	if within > 0 {
		bound = ` AND knowledge_chunks_fts.rowid <= (SELECT max(rowid) FROM
			(SELECT rowid FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ? ORDER BY rowid LIMIT ?))`
		args = append(args, match, within)
	}
	args = append(args, orgID)
	for _, id := range kbIDs {
		args = append(args, id)
	}
	return `SELECT source_id, seq, -bm25(knowledge_chunks_fts, 1.0, 0.0, 0.0, 0.0) AS score
		FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ?` + bound + `
		AND source_id IN (SELECT id FROM knowledge_base_sources WHERE org_id = ? AND knowledge_base_id IN (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(kbIDs)), ", ") + `))
		ORDER BY score DESC, source_id, seq LIMIT ?`, append(args, limit)
}

// ChunkTermCounts counts the chunks of every base that hold each term in
// the FTS5 index, which stops at upTo: the matches BestChunks ranks before
// it keeps the bases'.
func (dialect) ChunkTermCounts(_ []string, terms []string, upTo int) (string, []any) {
	parts := make([]string, len(terms))
	args := make([]any, 0, 2*len(terms))
	for i, term := range terms {
		parts[i] = fmt.Sprintf(`SELECT %d, (SELECT count(*) FROM
			(SELECT 1 FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ? LIMIT ?))`, i)
		args = append(args, textMatch([]string{term}, " OR "), upTo)
	}
	return strings.Join(parts, " UNION ALL "), args
}

// textMatch is the FTS5 query of the chunks holding terms, joined by join
// (" OR ", " AND ").
func textMatch(terms []string, join string) string {
	var m strings.Builder
	m.WriteString("text : (")
	for i, t := range terms {
		if i > 0 {
			m.WriteString(join)
		}
		m.WriteString(`"` + strings.ReplaceAll(t, `"`, `""`) + `"`)
	}
	m.WriteString(")")
	return m.String()
}

// CallSearch finds q in the calls_search FTS5 index as one phrase of its
// trigrams (quoted, so nothing in q is FTS5 syntax), lower()ed as the index
// is, among the organization's range of rowids. A q of fewer than three
// characters has no trigram; one with a NUL or that is not UTF-8 might not
// split into characters as LIKE splits it: LIKE answers those.
func (dialect) CallSearch(orgID, q string) (ids, count string, args []any, ok bool) {
	if utf8.RuneCountInString(q) < 3 || !utf8.ValidString(q) || strings.ContainsRune(q, 0) {
		return "", "", nil, false
	}
	const where = ` WHERE calls_search MATCH '"' || replace(lower(?), '"', '""') || '"'
		AND calls_search.rowid BETWEEN (SELECT n << 40 FROM call_search_orgs WHERE org_id = ?)
		AND (SELECT (n << 40) + 1099511627775 FROM call_search_orgs WHERE org_id = ?)`
	return `SELECT k.call_id FROM calls_search JOIN call_search_keys k ON k.key = calls_search.rowid` + where,
		`SELECT count(*) FROM calls_search` + where, []any{q, orgID, orgID}, true
}

// CustomPlans is empty: SQLite plans a statement again when a LIKE pattern
// bound to it changes.
func (dialect) CustomPlans() string { return "" }
