package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

// TestObserveTransactionsTimesEachKind: with an observer set, every
// Update (one group commit here) and every View is reported once, by its
// kind, with the time it took; after it is removed, none is.
func TestObserveTransactionsTimesEachKind(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mu sync.Mutex
	seen := map[string][]time.Duration{}
	s.ObserveTransactions(func(kind string, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		seen[kind] = append(seen[kind], d)
	})
	ctx := t.Context()
	org := model.Organization{Name: "observed", ConcurrencyLimit: 5}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &org) }); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.View(ctx, func(tx store.Tx) error { _, err := tx.GetOrg(ctx, org.ID); return err }); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	if len(seen["update"]) != 1 || len(seen["view"]) != 2 || len(seen) != 2 {
		t.Errorf("observed %v, want 1 update and 2 views", seen)
	}
	for kind, ds := range seen {
		for _, d := range ds {
			if d <= 0 {
				t.Errorf("%s took %v", kind, d)
			}
		}
	}
	mu.Unlock()

	s.ObserveTransactions(nil)
	if err := s.View(ctx, func(tx store.Tx) error { _, err := tx.GetOrg(ctx, org.ID); return err }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen["view"]) != 2 {
		t.Errorf("a view was observed after the observer was removed: %v", seen)
	}
}
