package sqlite

import (
	"errors"
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

// BestChunks asks the FTS5 index for chunks of the bases (their tokens in
// the kb column) AND any (or all) of the terms in the text column, each
// term quoted so that none is read as FTS5 syntax (AND, NEAR, a column
// filter, a prefix *; the index's tokenizer still stems it), and ranks them
// by bm25 with the kb column weighted 0, negated: bm25 is lower for better
// matches. Ranking happens inside the index, over the bases' matches only;
// source_id and seq come from the index's own columns.
func (dialect) BestChunks(_ string, kbIDs, terms []string, all bool, limit int) (string, []any) {
	join := " OR "
	if all {
		join = " AND "
	}
	return `SELECT source_id, seq, -bm25(knowledge_chunks_fts, 1.0, 0.0, 0.0, 0.0) AS score
		FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ?
		ORDER BY score DESC, source_id, seq LIMIT ?`, []any{chunkMatch(kbIDs, terms, join), limit}
}

// ChunkTermCount counts the bases' chunks that hold term in the FTS5 index,
// which stops at upTo.
func (dialect) ChunkTermCount(_ string, kbIDs []string, term string, upTo int) (string, []any) {
	return `SELECT count(*) FROM (SELECT 1 FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ? LIMIT ?)`,
		[]any{chunkMatch(kbIDs, []string{term}, " OR "), upTo}
}

// chunkMatch is the FTS5 query of the chunks of the bases kbIDs holding
// terms, joined by join (" OR ", " AND ").
func chunkMatch(kbIDs, terms []string, join string) string {
	var m strings.Builder
	m.WriteString("kb : (")
	for i, id := range kbIDs {
		if i > 0 {
			m.WriteString(" OR ")
		}
		m.WriteString(`"k` + strings.ReplaceAll(id, "-", "") + `0"`)
	}
	m.WriteString(") AND text : (")
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
