package sqlite_test

import (
	"context"
	"errors"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

// createOrg creates an organization named name whose webhook secret is
// size bytes long.
func createOrg(ctx context.Context, s store.Store, name string, size int) error {
	return s.Update(ctx, func(tx store.Tx) error {
		return tx.CreateOrg(ctx, &model.Organization{Name: name, ConcurrencyLimit: 1,
			WebhookSecret: make([]byte, size), CreatedAt: model.Now(), UpdatedAt: model.Now()})
	})
}

// orgExists reports whether an organization named name is stored.
func orgExists(t *testing.T, s store.Store, name string) bool {
	t.Helper()
	err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetOrgByName(t.Context(), name)
		return err
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("look %q up: %v", name, err)
	}
	return err == nil
}

// Another process holding the database's write lock past the busy timeout
// makes a write SQLITE_BUSY: ErrUnavailable, with SQLite's text; once the
// lock is let go the same write succeeds.
func TestBusyIsUnavailable(t *testing.T) {
	s := open(t, sqlite.WithBusyTimeout(20*time.Millisecond))
	ctx := t.Context()
	unlock := sqlitetest.LockWrites(t, sqlitetest.File(t, s.DB()))

	err := createOrg(ctx, s, "busy", 16)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("write under another's lock: %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "SQLITE_BUSY") && !strings.Contains(err.Error(), "locked") {
		t.Errorf("the driver's text is lost: %v", err)
	}

	unlock()
	if orgExists(t, s, "busy") {
		t.Fatal("the refused write was stored")
	}
	if err := createOrg(ctx, s, "busy", 16); err != nil {
		t.Fatalf("write after the lock is gone: %v", err)
	}
}

// A database that may not grow (max_page_count reached) makes a write
// SQLITE_FULL: ErrUnavailable, nothing of it stored; with room again the
// same write succeeds.
func TestFullIsUnavailable(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	stopGrowing(t, s)

	err := createOrg(ctx, s, "full", 1<<20)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("write to a full database: %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "SQLITE_FULL") && !strings.Contains(err.Error(), "full") {
		t.Errorf("the driver's text is lost: %v", err)
	}
	if orgExists(t, s, "full") {
		t.Fatal("the refused write was stored")
	}

	if _, err := s.DB().Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	if err := createOrg(ctx, s, "full", 1<<20); err != nil {
		t.Fatalf("write with room again: %v", err)
	}
}

// stopGrowing caps the database at the pages it has: a write that needs
// more fails SQLITE_FULL. (The writer pool is the one connection every
// write uses, so the pragma holds for all of them.)
func stopGrowing(t *testing.T, s *sqlstore.Store) {
	t.Helper()
	var pages int
	if err := s.DB().QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec("PRAGMA max_page_count = " + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
}

// Errors of the work itself are not unavailability.
func TestConstraintIsNotUnavailable(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	if err := createOrg(ctx, s, "twice", 16); err != nil {
		t.Fatal(err)
	}
	err := createOrg(ctx, s, "twice", 16)
	if !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("duplicate name: %v, want ErrConflict alone", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	err = s.View(canceled, func(tx store.Tx) error {
		_, err := tx.GetOrgByName(canceled, "twice")
		return err
	})
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("canceled read: %v, want an error other than ErrUnavailable", err)
	}
}

// When one member of a group commit fills the disk, SQLite ends the whole
// transaction: every member of the group fails as unavailable, none with
// another error, and only the Updates that succeeded are stored.
func TestFullFailsTheGroupAsUnavailable(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	stopGrowing(t, s)
	// A first Update holds the writer while the others queue up behind it,
	// so they commit as groups.
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- s.Update(ctx, func(store.Tx) error { close(holding); <-release; return nil })
	}()
	<-holding
	const n = 40
	errs := make([]error, n)
	var started, done sync.WaitGroup
	for i := range n {
		started.Add(1)
		done.Go(func() {
			size := 16
			if i%2 == 1 {
				size = 1 << 20 // cannot fit
			}
			started.Done()
			errs[i] = createOrg(ctx, s, "member "+strconv.Itoa(i), size)
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec("PRAGMA max_page_count = 1073741823"); err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if i%2 == 1 && err == nil {
			t.Errorf("member %d: a megabyte fit in a full database", i)
		}
		if err != nil && !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("member %d: %v, want ErrUnavailable", i, err)
		}
		if stored := orgExists(t, s, "member "+strconv.Itoa(i)); stored != (err == nil) {
			t.Errorf("member %d: error %v, stored %v", i, err, stored)
		}
	}
}
