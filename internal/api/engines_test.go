package api

import (
	"os"
	"testing"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// openSQLite is a fresh SQLite store in the test's temporary directory, a
// copy of one migrated once per test binary (sqlitetest).
func openSQLite(t testing.TB) store.Store {
	t.Helper()
	return sqlitetest.Open(t)
}

// openPostgres returns an opener of fresh PostgreSQL stores, each in a
// migrated, empty schema no other test is using (pgtest.Open: kept for
// the next test when this one ends, dropped by TestMain).
func openPostgres(url string) func(testing.TB) store.Store {
	return func(t testing.TB) store.Store {
		t.Helper()
		return pgtest.Open(t, url, "api_test", postgres.WithMaxConns(4))
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
