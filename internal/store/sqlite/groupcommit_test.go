package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// TestGroupCommit races Updates that commit, fail after writing, panic
// after writing, or arrive canceled: however the single writer groups them
// into transactions, each caller sees its own outcome, and exactly the
// writes of the Updates that succeeded are stored.
func TestGroupCommit(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	errRefused := errors.New("refused")
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	const n = 200
	orgs := make([]model.Organization, n)
	errs := make([]error, n)
	panics := make([]any, n)
	ran := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			c := ctx
			if i%5 == 4 {
				c = canceled
			}
			errs[i] = s.Update(c, func(tx store.Tx) error {
				ran[i] = true
				orgs[i] = model.Organization{Name: fmt.Sprintf("org %d", i), ConcurrencyLimit: 1}
				if err := tx.CreateOrg(ctx, &orgs[i]); err != nil {
					return err
				}
				switch i % 5 {
				case 1:
					return errRefused
				case 2:
					panic(fmt.Sprintf("member %d", i))
				}
				return nil
			})
		})
	}
	wg.Wait()

	stored := 0
	for i := range n {
		var wantErr error
		var wantPanic any
		switch i % 5 {
		case 1:
			wantErr = errRefused
		case 2:
			wantPanic = fmt.Sprintf("member %d", i)
		case 4:
			wantErr = context.Canceled
			if ran[i] {
				t.Errorf("update %d ran with a canceled context", i)
			}
		}
		if panics[i] != wantPanic {
			t.Errorf("update %d panicked with %v, want %v", i, panics[i], wantPanic)
		}
		if wantPanic == nil && !errors.Is(errs[i], wantErr) || wantErr == nil && errs[i] != nil {
			t.Errorf("update %d = %v, want %v", i, errs[i], wantErr)
		}
		if orgs[i].ID == "" {
			continue
		}
		_, err := store.Read(ctx, s, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(ctx, orgs[i].ID) })
		switch {
		case wantErr == nil && wantPanic == nil && err != nil:
			t.Errorf("update %d committed, but its organization is not stored: %v", i, err)
		case (wantErr != nil || wantPanic != nil) && !errors.Is(err, store.ErrNotFound):
			t.Errorf("update %d failed, but its organization is stored (%v)", i, err)
		case err == nil:
			stored++
		}
	}
	count, err := store.Read(ctx, s, func(tx store.Tx) (int, error) { return tx.CountOrgs(ctx) })
	if err != nil {
		t.Fatal(err)
	}
	if count != stored || stored != 2*n/5 {
		t.Errorf("%d organizations stored, %d found by id, want %d", count, stored, 2*n/5)
	}
}

// TestGroupCommitAfterClose: an Update (or a View) after Close fails with
// store.ErrClosed instead of waiting for a writer that is gone, so no
// retry of a background write outlives the store.
func TestGroupCommitAfterClose(t *testing.T) {
	s := open(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(t.Context(), func(store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Update after Close: %v", err)
	}
	if err := s.View(t.Context(), func(store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("View after Close: %v", err)
	}
}
