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

// MatchChunks looks the terms up in the FTS5 index, any of them (OR), each
// quoted so that none is read as FTS5 syntax (AND, NEAR, a column filter, a
// prefix *), and scores by bm25, negated: bm25 is lower for better matches.
// The index stems with porter, so a quoted term matches its other forms.
func (dialect) MatchChunks(terms []string) (from, score string, arg any) {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return `(SELECT rowid AS id, -bm25(knowledge_chunks_fts) AS score FROM knowledge_chunks_fts
			WHERE knowledge_chunks_fts MATCH ?) m
		JOIN knowledge_chunks c ON c.id = m.id`,
		"m.score", strings.Join(quoted, " OR ")
}
