package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// maxStmts bounds how many queries stay prepared: the constant ones are far
// fewer; queries built for a varying number of arguments stop being added
// once it is reached.
const maxStmts = 512

// stmtCache keeps the group committer's queries prepared on the writer
// connection: SQLite parses a query each time it is prepared, and parsing
// was a third of an admission's CPU. Only the committer goroutine uses it.
// A query is prepared between groups, never inside one: the single
// writer connection is taken by the group's transaction, and preparing on
// the pool would wait for it forever. Until then it runs unprepared.
type stmtCache struct {
	db     *sql.DB
	stmts  map[string]*sql.Stmt
	wanted []string // queries run unprepared in the group under way
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, stmts: map[string]*sql.Stmt{}}
}

// get returns query's statement, or nil when it is not prepared yet.
func (c *stmtCache) get(query string) *sql.Stmt {
	if st := c.stmts[query]; st != nil {
		return st
	}
	if len(c.stmts)+len(c.wanted) < maxStmts {
		c.wanted = append(c.wanted, query)
	}
	return nil
}

// prepare prepares the queries the last group ran unprepared. A query that
// fails to prepare stays unprepared.
func (c *stmtCache) prepare(ctx context.Context) {
	for _, q := range c.wanted {
		if c.stmts[q] != nil {
			continue
		}
		if st, err := c.db.PrepareContext(ctx, q); err == nil {
			c.stmts[q] = st
		}
	}
	c.wanted = c.wanted[:0]
}

func (c *stmtCache) close() error {
	var errs []error
	for _, st := range c.stmts {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}
