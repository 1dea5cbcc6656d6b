package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// Memory, as Open's path, is a private temporary database removed by Close.
const Memory = ":memory:"

// Option changes how Open opens the database.
type Option func(*options)

type options struct {
	migrate bool
	readers int
	busy    time.Duration
}

// WithoutMigrate opens the database without applying pending migrations.
func WithoutMigrate() Option { return func(o *options) { o.migrate = false } }

// WithReaders sets how many connections View may use at once (default 4).
func WithReaders(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.readers = n
		}
	}
}

// WithBusyTimeout sets how long a statement waits for a lock another
// process holds on the database before it fails with SQLITE_BUSY
// (store.ErrUnavailable): default 10 s.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.busy = d
		}
	}
}

// Open opens (creating if needed) the database file at path and, unless
// WithoutMigrate is given, applies pending migrations.
func Open(ctx context.Context, path string, opts ...Option) (*sqlstore.Store, error) {
	o := options{migrate: true, readers: 4, busy: 10 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("open sqlite %q: path must not contain ? or #", path)
	}
	cleanup := func() error { return nil }
	if path == Memory {
		dir, err := os.MkdirTemp("", "parley-sqlite-")
		if err != nil {
			return nil, fmt.Errorf("open sqlite in memory: %w", err)
		}
		path = filepath.Join(dir, "parley.db")
		cleanup = func() error { return os.RemoveAll(dir) }
	} else if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}

	writer, err := sql.Open("sqlite", dsn(path, false, o.busy))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open sqlite %s: %w", path, err), cleanup())
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	// The writer connects first: it creates the file and turns on WAL, which
	// the readers then find in place.
	if err := writer.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open sqlite %s: %w", path, err), writer.Close(), cleanup())
	}
	if o.migrate {
		if err := migrate(ctx, writer); err != nil {
			return nil, errors.Join(fmt.Errorf("open sqlite %s: %w", path, err), writer.Close(), cleanup())
		}
	}
	reader, err := sql.Open("sqlite", dsn(path, true, o.busy))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open sqlite %s reader: %w", path, err), writer.Close(), cleanup())
	}
	reader.SetMaxOpenConns(o.readers)
	reader.SetMaxIdleConns(o.readers)
	if err := reader.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open sqlite %s reader: %w", path, err), reader.Close(), writer.Close(), cleanup())
	}
	return sqlstore.New(sqlstore.Config{
		Dialect:     dialect{},
		Writer:      writer,
		Reader:      reader,
		Migrate:     func(ctx context.Context) error { return migrate(ctx, writer) },
		Cleanup:     cleanup,
		GroupCommit: true,
	}), nil
}

// dsn is the connection string for path: the pragmas every connection needs,
// and for the writer, immediate transactions.
func dsn(path string, readOnly bool, busy time.Duration) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", max(1, busy.Milliseconds())))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "mmap_size(268435456)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// A group commit's savepoints journal in memory, not a temporary file.
		q.Add("_pragma", "temp_store(MEMORY)")
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode()
}

// Migrate applies pending migrations to the database file at path (creating
// it if needed), for `parley migrate`.
func Migrate(ctx context.Context, path string) error {
	s, err := Open(ctx, path, WithoutMigrate())
	if err != nil {
		return err
	}
	return errors.Join(s.Migrate(ctx), s.Close())
}

func migrate(ctx context.Context, db *sql.DB) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.SQLite(),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrate sqlite: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate sqlite: %w", err)
	}
	return nil
}
