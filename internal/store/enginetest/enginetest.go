// Package enginetest opens, for tests, a fresh store of every engine they
// run on: SQLite always, PostgreSQL (in a schema of its own, dropped when
// the test ends) when PARLEY_TEST_DATABASE_URL is set. CI sets it, and
// with CI=true a test may not pass by leaving PostgreSQL out.
package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
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
		b := make([]byte, 8)
		rand.Read(b)
		schema := prefix + "_" + hex.EncodeToString(b)
		s, err := postgres.Open(context.Background(), url, postgres.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := s.DB().Exec("DROP SCHEMA " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err != nil {
				t.Errorf("drop schema %s: %v", schema, err)
			}
			s.Close()
		})
		return s
	}
	return out
}
