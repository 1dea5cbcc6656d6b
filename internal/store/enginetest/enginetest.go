// Package enginetest opens, for tests, a fresh store of every engine they
// run on: SQLite always, PostgreSQL (in a migrated, empty schema of its
// own: pgtest.Open, kept for the next test when TestMain runs through
// pgtest.Main) when PARLEY_TEST_DATABASE_URL is set. CI sets it, and
// with CI=true a test may not pass by leaving PostgreSQL out.
package enginetest

import (
	"os"
	"testing"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// Engines returns an opener per engine name; prefix starts the PostgreSQL
// schemas' names (the package under test, to tell them apart).
func Engines(t testing.TB, prefix string) map[string]func(testing.TB) store.Store {
	t.Helper()
	out := map[string]func(testing.TB) store.Store{
		"sqlite": func(t testing.TB) store.Store { return sqlitetest.Open(t) },
	}
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
		}
		return out
	}
	out["postgres"] = func(t testing.TB) store.Store {
		t.Helper()
		return pgtest.Open(t, url, prefix)
	}
	return out
}
