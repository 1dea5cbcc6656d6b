package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// maxGroup bounds how many Update calls share one transaction, so one
// commit never waits on an unbounded queue.
const maxGroup = 128

// errClosed answers an Update that arrives after Close.
var errClosed = store.ErrClosed

// committer runs every Update of a single-writer database (SQLite) on one
// goroutine, and commits the Updates that queued up while the previous
// commit ran as one transaction: a group commit. Each Update's fn runs
// inside its own savepoint, so an fn that fails (or panics) undoes only
// its own writes and its caller alone sees the error; the others commit.
// Nobody hears success before the shared COMMIT has succeeded, and a
// failed COMMIT is every member's error. Serially, the transactions of a
// group run in the order they arrived, exactly as they would one by one.
//
// An fn's queries run detached from its caller's cancellation: SQLite
// answers an interrupted write inside a transaction by rolling back the
// whole transaction, the other members' writes included. A caller's
// context is checked before its fn starts instead.
type committer struct {
	db      *sql.DB
	d       Dialect
	stmts   *stmtCache
	trips   *atomic.Uint64                     // Store.RoundTrips
	timed   func(kind string, start time.Time) // Store.ObserveTransactions
	reqs    chan *commitRequest                // unbuffered: a request sent is a request answered
	stop    chan struct{}                      // closed by close, once
	stopped chan struct{}                      // closed by run when it returns
	closing sync.Once
}

// commitRequest is one Update waiting for its group.
type commitRequest struct {
	ctx      context.Context
	fn       func(store.Tx) error
	err      error
	panicked any           // what fn panicked with, re-panicked in the caller
	done     chan struct{} // closed by the committer once err is final
}

func newCommitter(db *sql.DB, d Dialect, trips *atomic.Uint64, timed func(string, time.Time)) *committer {
	c := &committer{db: db, d: d, stmts: newStmtCache(db), trips: trips, timed: timed, reqs: make(chan *commitRequest), stop: make(chan struct{}), stopped: make(chan struct{})}
	go c.run()
	return c
}

// update hands fn to the committer and waits for its group's outcome.
func (c *committer) update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &commitRequest{ctx: ctx, fn: fn, done: make(chan struct{})}
	select {
	case c.reqs <- r:
	case <-c.stop:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	<-r.done // fn may be running: never leave before it has
	if r.panicked != nil {
		panic(r.panicked)
	}
	return r.err
}

// close stops the committer once the group under way is answered.
func (c *committer) close() {
	c.closing.Do(func() { close(c.stop) })
	<-c.stopped
}

func (c *committer) run() {
	defer close(c.stopped)
	defer c.stmts.close()
	group := make([]*commitRequest, 0, maxGroup)
	for {
		select {
		case r := <-c.reqs:
			group = append(group[:0], r)
		case <-c.stop:
			return
		}
	gather:
		for len(group) < maxGroup {
			select {
			case r := <-c.reqs:
				group = append(group, r)
			default:
				break gather
			}
		}
		c.commit(group)
		for _, r := range group {
			close(r.done)
		}
		c.stmts.prepare(context.Background())
	}
}

// commit runs the group's fns in one transaction and sets each request's
// err.
func (c *committer) commit(group []*commitRequest) {
	var live []*commitRequest
	for _, r := range group {
		if r.err = r.ctx.Err(); r.err == nil {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return
	}
	c.trips.Add(2) // BEGIN, and COMMIT or ROLLBACK
	defer c.timed("update", time.Now())
	sqlTx, err := c.db.BeginTx(context.Background(), nil)
	if err != nil {
		for _, r := range live {
			r.err = wrap(c.d, err, "begin transaction")
		}
		return
	}
	t := &tx{tx: sqlTx, d: c.d, write: true, detached: true, stmts: c.stmts, trips: c.trips}
	// One member needs no savepoint: its failure rolls back the transaction.
	alone := len(live) == 1
	var broken error // the transaction can no longer be committed
	committed := 0
	for _, r := range live {
		if !alone {
			c.trips.Add(2) // SAVEPOINT, RELEASE
			if _, err := sqlTx.Exec("SAVEPOINT member"); err != nil {
				broken = wrap(c.d, err, "savepoint")
				break
			}
		}
		r.err = runMember(r, t)
		if r.err == nil {
			committed++
		}
		if alone {
			break
		}
		if r.err != nil {
			c.trips.Add(1)
			if _, err := sqlTx.Exec("ROLLBACK TO member"); err != nil {
				broken = wrap(c.d, err, "roll back to savepoint")
				if errors.Is(r.err, store.ErrUnavailable) {
					// SQLite ends the whole transaction on a full disk or an
					// I/O error: the group's other writes are lost to it too.
					broken = fmt.Errorf("%w (%v)", r.err, broken)
				}
				break
			}
		}
		if _, err := sqlTx.Exec("RELEASE member"); err != nil {
			broken = wrap(c.d, err, "release savepoint")
			break
		}
	}
	if broken != nil {
		_ = sqlTx.Rollback()
		for _, r := range live {
			if r.err == nil {
				r.err = fmt.Errorf("group commit: %w", broken)
			}
		}
		return
	}
	if committed == 0 {
		if err := sqlTx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
			for _, r := range live {
				r.err = errors.Join(r.err, fmt.Errorf("roll back: %w", err))
			}
		}
		return
	}
	if err := sqlTx.Commit(); err != nil {
		for _, r := range live {
			if r.err == nil {
				r.err = wrap(c.d, err, "commit")
			}
		}
	}
}

// runMember runs one request's fn, turning a panic into an error for the
// group and keeping the panic for its caller.
func runMember(r *commitRequest, t *tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return r.fn(t)
}
