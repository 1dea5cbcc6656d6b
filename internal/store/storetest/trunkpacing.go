package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

var trunkPacingTests = []test{
	{"RoundTrip", func(t *testing.T, b *bundle) {
		lock := func(trunk string) time.Time {
			var next time.Time
			b.update(t, func(tx store.Tx) (err error) {
				next, err = tx.LockTrunkPace(b.ctx, trunk)
				return err
			})
			return next
		}
		if got := lock("trunk:a"); !got.Equal(time.Unix(0, 0)) {
			t.Fatalf("a trunk never paced: %v, want the epoch", got)
		}
		b.update(t, func(tx store.Tx) error {
			if _, err := tx.LockTrunkPace(b.ctx, "trunk:a"); err != nil {
				return err
			}
			return tx.SetTrunkPace(b.ctx, "trunk:a", at(5).Add(1500*time.Microsecond))
		})
		if got := lock("trunk:a"); !got.Equal(at(5).Add(time.Millisecond)) {
			t.Errorf("after a set: %v, want %v (to the millisecond)", got, at(5).Add(time.Millisecond))
		}
		if got := lock("default:pbx.example:5060/udp"); !got.Equal(time.Unix(0, 0)) {
			t.Errorf("another trunk: %v, want the epoch", got)
		}
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.SetTrunkPace(b.ctx, "trunk:unknown", at(1)) }), store.ErrNotFound)
	}},
	// Servers claiming slots of one trunk at once never take the same one:
	// the row is held from the read to the write.
	{"ConcurrentClaimsSerialize", func(t *testing.T, b *bundle) {
		const workers, each = 6, 5
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					errs <- b.st.Update(b.ctx, func(tx store.Tx) error {
						next, err := tx.LockTrunkPace(b.ctx, "trunk:shared")
						if err != nil {
							return err
						}
						if next.Before(base) {
							next = base
						}
						return tx.SetTrunkPace(b.ctx, "trunk:shared", next.Add(time.Second))
					})
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var next time.Time
		b.update(t, func(tx store.Tx) (err error) {
			next, err = tx.LockTrunkPace(b.ctx, "trunk:shared")
			return err
		})
		if want := at(workers * each); !next.Equal(want) {
			t.Errorf("after %d claims: %v, want %v (claims were lost)", workers*each, next, want)
		}
	}},
}
