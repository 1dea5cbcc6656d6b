package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

func TestMain(m *testing.M) { os.Exit(Main(m).Run()) }

func databaseURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
		}
		t.Skip("PARLEY_TEST_DATABASE_URL is not set")
	}
	return u
}

// A schema a test is done with goes to the next test empty, rows its
// triggers wrote included; one whose tables a test changed is dropped, not
// handed on.
func TestOpenHandsOnEmptySchemas(t *testing.T) {
	url := databaseURL(t)
	ctx := context.Background()
	schema := func(s *sqlstore.Store) string {
		var name string
		if err := s.DB().QueryRowContext(ctx, "SELECT current_schema()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		return name
	}
	var first string
	t.Run("fill", func(t *testing.T) {
		s := Open(t, url, "pgtest")
		first = schema(s)
		org := model.Organization{Name: "acme", ConcurrencyLimit: 10}
		if err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &org) }); err != nil {
			t.Fatal(err)
		}
		// A row only a trigger writes.
		if _, err := s.DB().ExecContext(ctx, "INSERT INTO call_counts (org_id, calls) VALUES ($1, 1)", org.ID); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reuse", func(t *testing.T) {
		s := Open(t, url, "pgtest")
		if got := schema(s); got != first {
			t.Fatalf("schema %s, want %s kept from the test before", got, first)
		}
		tables, err := s.DB().QueryContext(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'goose_db_version'")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for tables.Next() {
			var name string
			if err := tables.Scan(&name); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		tables.Close()
		if len(names) < 20 {
			t.Fatalf("%d tables: %v", len(names), names)
		}
		for _, name := range names {
			var n int
			if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM "+name).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d rows, %v", name, n, err)
			}
		}
		var applied int
		if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM goose_db_version").Scan(&applied); err != nil || applied < 2 {
			t.Errorf("goose_db_version: %d rows, %v (the migrations' record must stay)", applied, err)
		}
		// Changed: not kept.
		if _, err := s.DB().ExecContext(ctx, "DROP TABLE suppressions"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("after a change", func(t *testing.T) {
		s := Open(t, url, "pgtest")
		if got := schema(s); got == first {
			t.Fatalf("schema %s, whose tables the test before changed, was handed on", got)
		}
		var exists bool
		if err := s.DB().QueryRowContext(ctx, "SELECT to_regclass('suppressions') IS NOT NULL").Scan(&exists); err != nil || !exists {
			t.Fatalf("suppressions in a new schema: %v, %v", exists, err)
		}
		var gone bool
		if err := s.DB().QueryRowContext(ctx, "SELECT NOT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", first).Scan(&gone); err != nil || !gone {
			t.Errorf("the changed schema %s was not dropped: %v", first, err)
		}
	})
}
