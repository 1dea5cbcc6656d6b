package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc64"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// Option changes how Open opens the database.
type Option func(*options)

type options struct {
	migrate  bool
	schema   string
	maxConns int
}

// WithoutMigrate opens the database without applying pending migrations.
func WithoutMigrate() Option { return func(o *options) { o.migrate = false } }

// WithSchema keeps Parley's tables in schema, created if missing, by making
// it every connection's search_path.
func WithSchema(schema string) Option { return func(o *options) { o.schema = schema } }

// WithMaxConns bounds the connection pool (default 10).
func WithMaxConns(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxConns = n
		}
	}
}

// Open connects to the database at url (postgres://...) and, unless
// WithoutMigrate is given, applies pending migrations.
func Open(ctx context.Context, url string, opts ...Option) (*sqlstore.Store, error) {
	o := options{migrate: true, maxConns: 10}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err) // pgx redacts the password
	}
	if o.schema != "" {
		cfg.RuntimeParams["search_path"] = o.schema
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(o.maxConns)
	db.SetMaxIdleConns(o.maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	fail := func(err error) (*sqlstore.Store, error) {
		return nil, errors.Join(fmt.Errorf("open postgres %s/%s: %w", cfg.Host, cfg.Database, err), db.Close())
	}
	if err := db.PingContext(ctx); err != nil {
		return fail(err)
	}
	if o.schema != "" {
		if err := createSchema(ctx, db, o.schema); err != nil {
			return fail(err)
		}
	}
	if o.migrate {
		if err := migrate(ctx, db); err != nil {
			return fail(err)
		}
	}
	return sqlstore.New(sqlstore.Config{
		Dialect: dialect{rebound: new(sync.Map)},
		Writer:  db,
		Migrate: func(ctx context.Context) error { return migrate(ctx, db) },
		Watch:   func(ctx context.Context, wake func()) error { return watchLines(ctx, cfg, wake) },
	}), nil
}

// createSchema creates schema unless it exists. Two processes creating it at
// once can both pass IF NOT EXISTS; the loser's unique violation means the
// schema is there, which is all that was asked.
func createSchema(ctx context.Context, db *sql.DB, schema string) error {
	_, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == uniqueViolation || pgErr.Code == duplicateSchema) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	return nil
}

// Migrate applies pending migrations to the database at url, for
// `parley migrate`.
func Migrate(ctx context.Context, url string, opts ...Option) error {
	s, err := Open(ctx, url, append(opts, WithoutMigrate())...)
	if err != nil {
		return err
	}
	return errors.Join(s.Migrate(ctx), s.Close())
}

func migrate(ctx context.Context, db *sql.DB) error {
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	if !schema.Valid {
		return errors.New("migrate postgres: no schema on the search_path exists")
	}
	// One lock per schema: processes migrating the same tables take turns;
	// tests in their own schemas do not wait on each other.
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(int64(crc64.Checksum([]byte("parley migrate "+schema.String), crc64.MakeTable(crc64.ECMA)))),
		lock.WithLockTimeout(1, 300),
	)
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.Postgres(),
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate postgres: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate postgres schema %s: %w", schema.String, err)
	}
	return nil
}
