package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// Config is what an engine hands to New.
type Config struct {
	Dialect Dialect
	// Writer runs Update. On SQLite it holds one connection, so writers queue
	// in Go rather than fail with SQLITE_BUSY.
	Writer *sql.DB
	// Reader runs View; nil means Writer.
	Reader *sql.DB
	// Migrate applies the engine's schema migrations to Writer.
	Migrate func(ctx context.Context) error
	// Cleanup runs after both pools are closed (a temporary database's
	// directory is removed there).
	Cleanup func() error
	// Watch listens for freed lines (store.Store.WatchLines); nil for an
	// engine only one server uses.
	Watch func(ctx context.Context, wake func()) error
	// GroupCommit commits concurrent Updates together (see committer): for
	// a single-writer engine, where they would otherwise queue for the one
	// connection and commit one by one.
	GroupCommit bool
}

// Store is a store.Store over database/sql.
type Store struct {
	cfg    Config
	commit *committer  // nil without GroupCommit
	closed atomic.Bool // after Close: work is refused with store.ErrClosed
	trips  atomic.Uint64
	// observe receives each transaction's duration (ObserveTransactions).
	observe atomic.Pointer[TxObserver]
}

// TxObserver is told how long a transaction took, from its BEGIN (waiting
// for a connection included) to its COMMIT or ROLLBACK: kind is "update"
// (a read-write transaction; on SQLite one group commit, whatever the
// Updates it carries) or "view".
type TxObserver func(kind string, d time.Duration)

// ObserveTransactions has every transaction from now on timed by o (nil:
// none): the metric parley_store_transaction_seconds, the database's time
// per unit of work.
func (s *Store) ObserveTransactions(o TxObserver) {
	if o == nil {
		s.observe.Store(nil)
		return
	}
	s.observe.Store(&o)
}

// timed reports the time since start to the observer, if any.
func (s *Store) timed(kind string, start time.Time) {
	if o := s.observe.Load(); o != nil {
		(*o)(kind, time.Since(start))
	}
}

var _ store.Store = (*Store)(nil)

// New returns a Store over the pools in cfg; Close closes them.
func New(cfg Config) *Store {
	if cfg.Reader == nil {
		cfg.Reader = cfg.Writer
	}
	s := &Store{cfg: cfg}
	if cfg.GroupCommit {
		s.commit = newCommitter(cfg.Writer, cfg.Dialect, &s.trips, s.timed)
	}
	return s
}

// readOnly is how View begins: read-only, and one snapshot for all its
// queries, so a list's rows and its total count agree.
var readOnly = &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead}

// Update runs fn in a read-write transaction, committed when fn returns nil.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if s.commit != nil {
		return s.commit.update(ctx, fn)
	}
	return s.run(ctx, s.cfg.Writer, nil, fn)
}

// View runs fn in a read-only transaction.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.run(ctx, s.cfg.Reader, readOnly, fn)
}

func (s *Store) run(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(store.Tx) error) error {
	if s.closed.Load() {
		return fmt.Errorf("begin transaction: %w", store.ErrClosed)
	}
	s.trips.Add(2) // BEGIN, and COMMIT or ROLLBACK
	kind := "update"
	if opts != nil && opts.ReadOnly {
		kind = "view"
	}
	defer s.timed(kind, time.Now())
	sqlTx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return wrap(s.cfg.Dialect, err, "begin transaction")
	}
	defer func() {
		if p := recover(); p != nil {
			_ = sqlTx.Rollback()
			panic(p)
		}
	}()
	if err := fn(&tx{tx: sqlTx, d: s.cfg.Dialect, write: opts == nil || !opts.ReadOnly, trips: &s.trips}); err != nil {
		if rbErr := sqlTx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("roll back: %w", rbErr))
		}
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return wrap(s.cfg.Dialect, err, "commit")
	}
	return nil
}

// RoundTrips is how many statements the store has sent to the database,
// transaction control (BEGIN, COMMIT, ROLLBACK, savepoints) included: on
// PostgreSQL each is a round trip over the network, on SQLite a call into
// the library. The call plane's cost per call is counted with it (tests,
// and the metric parley_store_round_trips_total).
func (s *Store) RoundTrips() uint64 { return s.trips.Load() }

// Engine names the database engine.
func (s *Store) Engine() string { return s.cfg.Dialect.Engine() }

// Ping checks that both pools answer.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.cfg.Writer.PingContext(ctx); err != nil {
		return wrap(s.cfg.Dialect, err, "ping "+s.Engine())
	}
	if s.cfg.Reader != s.cfg.Writer {
		if err := s.cfg.Reader.PingContext(ctx); err != nil {
			return wrap(s.cfg.Dialect, err, "ping "+s.Engine()+" reader")
		}
	}
	return nil
}

// WatchLines runs the engine's watch for freed lines.
func (s *Store) WatchLines(ctx context.Context, wake func()) error {
	if s.cfg.Watch == nil {
		return errors.ErrUnsupported
	}
	return s.cfg.Watch(ctx, wake)
}

// Migrate applies the schema migrations not yet applied.
func (s *Store) Migrate(ctx context.Context) error {
	if s.cfg.Migrate == nil {
		return nil
	}
	return s.cfg.Migrate(ctx)
}

// DB is the read-write pool, for engine-level work the Tx does not cover
// (tests, maintenance).
func (s *Store) DB() *sql.DB { return s.cfg.Writer }

// Close closes both pools.
func (s *Store) Close() error {
	s.closed.Store(true)
	if s.commit != nil {
		s.commit.close()
	}
	var errs []error
	if s.cfg.Reader != s.cfg.Writer {
		errs = append(errs, s.cfg.Reader.Close())
	}
	errs = append(errs, s.cfg.Writer.Close())
	if s.cfg.Cleanup != nil {
		errs = append(errs, s.cfg.Cleanup())
	}
	return errors.Join(errs...)
}
