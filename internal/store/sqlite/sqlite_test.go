package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"github.com/parley-voice/parley/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// open returns a migrated store in a fresh file, closed when t ends.
func open(t *testing.T, opts ...sqlite.Option) *sqlstore.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func TestStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
	})
}

func TestPragmas(t *testing.T) {
	s := open(t)
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"synchronous":  "1", // NORMAL
		"busy_timeout": "10000",
	} {
		var got string
		if err := s.DB().QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", pragma, got, want)
		}
	}
}

func TestMemory(t *testing.T) {
	s, err := sqlite.Open(t.Context(), sqlite.Memory)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		t.Fatal(err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.CreateOrg(t.Context(), &model.Organization{Name: "m"}) })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(file)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary directory of %s still there after Close: %v", file, err)
	}
}

func TestMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path, sqlite.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(t.Context(), "SELECT 1 FROM organizations"); err == nil {
		t.Fatal("tables exist before migrating")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // applying twice is a no-op
		if err := sqlite.Migrate(t.Context(), path); err != nil {
			t.Fatal(err)
		}
	}
	s, err = sqlite.Open(t.Context(), path, sqlite.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	if err := s.View(t.Context(), func(tx store.Tx) (err error) { n, err = tx.CountOrgs(t.Context()); return }); err != nil || n != 0 {
		t.Fatalf("count after migrate = %d, %v", n, err)
	}
}

// TestSourceCount fills knowledge_base_sources by hand (no Tx method writes
// it yet) to check the count and the cascade.
func TestSourceCount(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	org := model.Organization{Name: "o"}
	kb := model.KnowledgeBase{Name: "kb"}
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		kb.OrgID = org.ID
		return tx.CreateKnowledgeBase(ctx, &kb)
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := s.DB().ExecContext(ctx, `INSERT INTO knowledge_base_sources
			(id, org_id, knowledge_base_id, display_name, created_at, updated_at) VALUES (?, ?, ?, 'doc', '', '')`,
			model.NewID(), org.ID, kb.ID)
		if err != nil {
			t.Fatal(err)
		}
	}
	var got model.KnowledgeBase
	if err := s.View(ctx, func(tx store.Tx) (err error) { got, err = tx.GetKnowledgeBase(ctx, org.ID, kb.ID); return }); err != nil {
		t.Fatal(err)
	}
	if got.SourceCount != 3 {
		t.Fatalf("source count = %d, want 3", got.SourceCount)
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.DeleteKnowledgeBase(ctx, org.ID, kb.ID) }); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM knowledge_base_sources").Scan(&left); err != nil || left != 0 {
		t.Fatalf("sources left after deleting their knowledge base: %d, %v", left, err)
	}
}
