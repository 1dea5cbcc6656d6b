package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// Migrating a schema is most of what a store test costs on PostgreSQL:
// some 200 statements of DDL, then a DROP SCHEMA of as many objects, about
// a second of the server's CPU each way on a loaded 2-core machine, while
// the test itself takes milliseconds. A test binary whose TestMain runs
// through Main keeps the schemas its tests are done with, emptied (every
// row deleted, a few milliseconds), and hands them to the next Open; Main
// drops them when the tests are over.

// Open returns a store on the server url names, in a migrated schema no
// other test is using (prefix starts new schemas' names), closed when t
// ends. The schema is empty, like a new one: its tables are those the
// migrations made, with no rows. Without Main, or without a superuser to
// empty it, the schema is dropped when t ends.
func Open(t testing.TB, url, prefix string, opts ...postgres.Option) *sqlstore.Store {
	t.Helper()
	schema, reused := kept.take(url)
	if !reused {
		b := make([]byte, 8)
		rand.Read(b)
		schema = prefix + "_" + hex.EncodeToString(b)
	} else {
		opts = append(opts, postgres.WithoutMigrate())
	}
	s, err := postgres.Open(context.Background(), url, append(opts, postgres.WithSchema(schema))...)
	if err != nil {
		if reused {
			kept.drop(url, schema)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if kept.keeping() {
			err := empty(s.DB(), schema)
			if err == nil {
				s.Close()
				kept.give(url, schema)
				return
			}
			t.Logf("pgtest: schema %s dropped, not kept: %v", schema, err)
		}
		if _, err := s.DB().Exec("DROP SCHEMA " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		s.Close()
	})
	return s
}

// Main runs m's tests and then drops the schemas Open kept. Use it in
// TestMain, e.g. goleak.VerifyTestMain(pgtest.Main(m)).
func Main(m *testing.M) interface{ Run() int } { return runner{m} }

// runner is m, run with the kept schemas dropped after it.
type runner struct{ m *testing.M }

func (r runner) Run() int {
	kept.mu.Lock()
	kept.running = true
	kept.mu.Unlock()
	code := r.m.Run()
	if err := kept.dropAll(); err != nil {
		fmt.Println("pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// kept are the emptied schemas, by server URL.
var kept = &schemas{free: map[string][]string{}}

type schemas struct {
	mu      sync.Mutex
	running bool // Main is running the tests
	free    map[string][]string
}

func (k *schemas) keeping() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.running
}

func (k *schemas) take(url string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	free := k.free[url]
	if len(free) == 0 {
		return "", false
	}
	k.free[url] = free[:len(free)-1]
	return free[len(free)-1], true
}

func (k *schemas) give(url, schema string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.free[url] = append(k.free[url], schema)
}

// drop drops one schema, for a reused one that failed to open.
func (k *schemas) drop(url, schema string) {
	if err := dropSchemas(url, []string{schema}); err != nil {
		fmt.Println("pgtest:", err)
	}
}

func (k *schemas) dropAll() error {
	k.mu.Lock()
	free := k.free
	k.free = map[string][]string{}
	k.mu.Unlock()
	var errs []error
	for url, names := range free {
		errs = append(errs, dropSchemas(url, names))
	}
	return errors.Join(errs...)
}

func dropSchemas(url string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("drop the kept schemas: %w", err)
	}
	defer conn.Close(ctx)
	ids := make([]string, len(names))
	for i, n := range names {
		ids[i] = pgx.Identifier{n}.Sanitize()
	}
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+strings.Join(ids, ", ")+" CASCADE"); err != nil {
		return fmt.Errorf("drop the kept schemas %v: %w", names, err)
	}
	return nil
}

// migrated are the tables the migrations make, as the first schema
// emptied had them: a schema whose tables differ (a test changed them) is
// not kept.
var migrated struct {
	once   sync.Once
	tables []string
}

// empty deletes every row of schema's tables but goose's version table,
// in one transaction with triggers and foreign keys off (the replica role:
// a superuser's), so that neither order nor the triggers' bookkeeping
// matters: the bookkeeping tables are emptied too.
func empty(db *sql.DB, schema string) error {
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", schema)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	migrated.once.Do(func() { migrated.tables = tables })
	if !slices.Equal(tables, migrated.tables) {
		return fmt.Errorf("its tables %v are not the migrations' %v", tables, migrated.tables)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
		return err
	}
	for _, name := range tables {
		if name == "goose_db_version" {
			continue
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+pgx.Identifier{schema, name}.Sanitize()); err != nil {
			return err
		}
	}
	return tx.Commit()
}
