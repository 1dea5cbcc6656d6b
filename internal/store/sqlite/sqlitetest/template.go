package sqlitetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// Open returns a fresh store in t's temporary directory, migrated to the
// latest schema, closed when t ends. opts are sqlite.Open's (WithReaders);
// the database is never migrated again.
func Open(t testing.TB, opts ...sqlite.Option) *sqlstore.Store {
	t.Helper()
	db, err := migrated()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "parley.db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), path, append(opts, sqlite.WithoutMigrate())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close the store: %v", err)
		}
	})
	return s
}

// migrated is the template's bytes: every migration applied to an empty
// database, once per process.
var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "parley-sqlitetest-")
	if err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	if err := s.Close(); err != nil {
		return nil, fmt.Errorf("sqlite template: %w", err)
	}
	// The last connection to close checkpoints the WAL into the file and
	// removes it: a WAL left behind would hold schema the copy lacks.
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("sqlite template: the WAL outlived Close (%v)", err)
	}
	return os.ReadFile(path)
})
