package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/parley-voice/parley/internal/store"
)

// tx is a store.Tx over one database/sql transaction.
type tx struct {
	tx *sql.Tx
	d  Dialect
	// write is true in Update: only there may a query lock rows.
	write bool
	// detached runs queries without their caller's cancellation (a group
	// commit's members: see committer).
	detached bool
	// stmts holds the group committer's prepared queries (nil: none).
	stmts *stmtCache
	// trips counts the statements sent (Store.RoundTrips).
	trips *atomic.Uint64
}

var _ store.Tx = (*tx)(nil)

func (t *tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = t.detach(ctx)
	t.trips.Add(1)
	if st := t.prepared(query); st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, t.d.Rebind(query), args...)
}

func (t *tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = t.detach(ctx)
	t.trips.Add(1)
	if st := t.prepared(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, t.d.Rebind(query), args...)
}

func (t *tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = t.detach(ctx)
	t.trips.Add(1)
	if st := t.prepared(query); st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, t.d.Rebind(query), args...)
}

// prepared is query's prepared statement, or nil.
func (t *tx) prepared(query string) *sql.Stmt {
	if t.stmts == nil {
		return nil
	}
	return t.stmts.get(t.d.Rebind(query))
}

func (t *tx) detach(ctx context.Context) context.Context {
	if t.detached {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// fail wraps err with what was being done, naming the sentinel it stands for:
// no row is ErrNotFound, and the dialect recognises conflicts, dangling
// references and a database that cannot take the work (ErrUnavailable). The
// driver's message is kept as text, not as a wrapped error, so errors.Is sees
// only the sentinel.
func (t *tx) fail(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	if s := t.d.Sentinel(err); s != nil {
		return fmt.Errorf("%s: %w: %v", what, s, err)
	}
	return wrap(t.d, err, what)
}

// notFound is the error for a lookup that cannot match before it runs.
func notFound(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), store.ErrNotFound)
}

// change runs an UPDATE or DELETE that must touch a row: none is ErrNotFound.
func (t *tx) change(ctx context.Context, what string, query string, args ...any) error {
	res, err := t.exec(ctx, query, args...)
	if err != nil {
		return t.fail(err, "%s", what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: rows affected: %w", what, err)
	}
	if n == 0 {
		return notFound("%s", what)
	}
	return nil
}

// forUpdate is the dialect's row-locking clause in a write transaction, and
// nothing in a read-only one (which cannot lock rows, and has nothing to
// protect them for).
func (t *tx) forUpdate(skipLocked bool) string {
	if !t.write {
		return ""
	}
	return t.d.ForUpdate(skipLocked)
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// get reads one row.
func get[T any](ctx context.Context, t *tx, scan func(rowScanner) (T, error), what string, query string, args ...any) (T, error) {
	v, err := scan(t.queryRow(ctx, query, args...))
	if err != nil {
		var zero T
		return zero, t.fail(err, "%s", what)
	}
	return v, nil
}

// all reads every row; no rows is an empty, non-nil slice.
func all[T any](ctx context.Context, t *tx, scan func(rowScanner) (T, error), what string, query string, args ...any) ([]T, error) {
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, t.fail(err, "%s", what)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, t.fail(err, "%s", what)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, t.fail(err, "%s", what)
	}
	return out, nil
}

// count reads a single integer.
func (t *tx) count(ctx context.Context, what string, query string, args ...any) (int, error) {
	var n int
	if err := t.queryRow(ctx, query, args...).Scan(&n); err != nil {
		return 0, t.fail(err, "%s", what)
	}
	return n, nil
}
