package sqlite

import (
	"errors"
	"strings"
	"time"

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
// the kb column) AND any of the terms in the text column, each term quoted
// so that none is read as FTS5 syntax (AND, NEAR, a column filter, a prefix
// *; the index's tokenizer still stems it), and ranks them by bm25 with the
// kb column weighted 0, negated: bm25 is lower for better matches. Ranking
// happens inside the index, over the bases' matches only; source_id and seq
// come from the index's own columns.
func (dialect) BestChunks(_ string, kbIDs, terms []string, limit int) (string, []any) {
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
			m.WriteString(" OR ")
		}
		m.WriteString(`"` + strings.ReplaceAll(t, `"`, `""`) + `"`)
	}
	m.WriteString(")")
	return `SELECT source_id, seq, -bm25(knowledge_chunks_fts, 1.0, 0.0, 0.0, 0.0) AS score
		FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ?
		ORDER BY score DESC, source_id, seq LIMIT ?`, []any{m.String(), limit}
}
