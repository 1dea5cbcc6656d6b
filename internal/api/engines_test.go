package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

// openSQLite is a fresh SQLite store in the test's temporary directory. It
// starts as a copy of a database migrated once per test binary: running the
// migrations for each test (under -race) cost more than anything the tests
// did with the store. Open still runs the migrator, which finds none pending.
func openSQLite(t testing.TB) store.Store {
	t.Helper()
	migrated, err := migratedSQLite()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "parley.db")
	if err := os.WriteFile(path, migrated, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// migratedSQLite is the file of a newly created, fully migrated database.
var migratedSQLite = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "parley-api-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "parley.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	// Closing the last connection checkpoints the write-ahead log into the
	// file and removes it; a log left behind would hold part of the schema.
	if wal, err := os.Stat(path + "-wal"); err == nil && wal.Size() > 0 {
		return nil, fmt.Errorf("migrated database left a %d-byte write-ahead log", wal.Size())
	}
	return os.ReadFile(path)
})

// openPostgres returns an opener of fresh PostgreSQL stores, each in a
// schema of its own that is dropped when its test ends.
func openPostgres(url string) func(testing.TB) store.Store {
	return func(t testing.TB) store.Store {
		t.Helper()
		b := make([]byte, 8)
		rand.Read(b)
		schema := "api_test_" + hex.EncodeToString(b)
		st, err := postgres.Open(context.Background(), url, postgres.WithSchema(schema), postgres.WithMaxConns(4))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := st.DB().Exec("DROP SCHEMA " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
			}
			st.Close()
		})
		return st
	}
}

// engines are the stores a test runs on, as env options: SQLite always,
// PostgreSQL when PARLEY_TEST_DATABASE_URL is set (CI sets it and must not
// pass by skipping it).
func engines(t testing.TB) map[string]envOption {
	out := map[string]envOption{"sqlite": onStore(openSQLite)}
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
		}
		return out
	}
	out["postgres"] = onStore(openPostgres(url))
	return out
}

// onStore makes the env run on the stores open returns.
func onStore(open func(testing.TB) store.Store) envOption {
	return func(c *envConfig) { c.open = open }
}
