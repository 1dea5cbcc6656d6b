package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func newIdempotencyKey(orgID, key string, created int) model.IdempotencyKey {
	return model.IdempotencyKey{OrgID: orgID, Scope: "POST /v1/calls", Key: key, RequestHash: "h1",
		ResourceID: model.NewID(), StatusCode: 201, Response: []byte(`{"data":{}}`), CreatedAt: at(created)}
}

var idempotencyTests = []test{
	{"PutGet", func(t *testing.T, b *bundle) {
		k := newIdempotencyKey(b.org.ID, "k1", 10)
		b.update(t, func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &k, at(0)) })
		got := read(t, b, func(tx store.Tx) (model.IdempotencyKey, error) {
			return tx.GetIdempotencyKey(b.ctx, b.org.ID, k.Scope, "k1", at(0))
		})
		wantEqual(t, k, got)
		// Another organization, another route or another key: never used.
		for _, q := range []struct{ org, scope, key string }{
			{b.other.ID, k.Scope, "k1"}, {b.org.ID, "POST /v1/messages", "k1"}, {b.org.ID, k.Scope, "K1"},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.IdempotencyKey, error) {
				return tx.GetIdempotencyKey(b.ctx, q.org, q.scope, q.key, at(0))
			}), store.ErrNotFound)
		}
	}},
	{"WithoutResponse", func(t *testing.T, b *bundle) {
		k := newIdempotencyKey(b.org.ID, "k1", 10)
		k.Response = nil
		b.update(t, func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &k, at(0)) })
		got := read(t, b, func(tx store.Tx) (model.IdempotencyKey, error) {
			return tx.GetIdempotencyKey(b.ctx, b.org.ID, k.Scope, "k1", at(0))
		})
		wantEqual(t, k, got)
		b.update(t, func(tx store.Tx) error {
			return tx.SetIdempotencyResponse(b.ctx, b.org.ID, k.Scope, "k1", []byte(`{"data":{"id":"x"}}`))
		})
		got = read(t, b, func(tx store.Tx) (model.IdempotencyKey, error) {
			return tx.GetIdempotencyKey(b.ctx, b.org.ID, k.Scope, "k1", at(0))
		})
		k.Response = []byte(`{"data":{"id":"x"}}`)
		wantEqual(t, k, got)
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.SetIdempotencyResponse(b.ctx, b.other.ID, k.Scope, "k1", []byte(`{}`))
		}), store.ErrNotFound)
	}},
	{"UsedTwice", func(t *testing.T, b *bundle) {
		k := newIdempotencyKey(b.org.ID, "k1", 10)
		b.update(t, func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &k, at(0)) })
		again := newIdempotencyKey(b.org.ID, "k1", 20)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &again, at(5)) }), store.ErrConflict)
		// The same key in another organization is its own.
		other := newIdempotencyKey(b.other.ID, "k1", 20)
		b.update(t, func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &other, at(5)) })
	}},
	{"Expired", func(t *testing.T, b *bundle) {
		old := newIdempotencyKey(b.org.ID, "k1", 10)
		stale := newIdempotencyKey(b.org.ID, "k2", 11)
		b.update(t, func(tx store.Tx) error {
			return errors.Join(tx.PutIdempotencyKey(b.ctx, &old, at(0)), tx.PutIdempotencyKey(b.ctx, &stale, at(0)))
		})
		// Past the window the key reads as never used, and can be used again.
		wantIs(t, readErr(b, func(tx store.Tx) (model.IdempotencyKey, error) {
			return tx.GetIdempotencyKey(b.ctx, b.org.ID, old.Scope, "k1", at(12))
		}), store.ErrNotFound)
		fresh := newIdempotencyKey(b.org.ID, "k1", 30)
		b.update(t, func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &fresh, at(12)) })
		got := read(t, b, func(tx store.Tx) (model.IdempotencyKey, error) {
			return tx.GetIdempotencyKey(b.ctx, b.org.ID, old.Scope, "k1", at(0))
		})
		wantEqual(t, fresh, got)
		// The organization's other expired keys went with it.
		wantIs(t, readErr(b, func(tx store.Tx) (model.IdempotencyKey, error) {
			return tx.GetIdempotencyKey(b.ctx, b.org.ID, old.Scope, "k2", at(0))
		}), store.ErrNotFound)
	}},
	{"ConcurrentPuts", func(t *testing.T, b *bundle) {
		const n = 20
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				k := newIdempotencyKey(b.org.ID, "same", 10)
				errs[i] = b.writeErr(func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &k, at(0)) })
			})
		}
		wg.Wait()
		stored := 0
		for _, err := range errs {
			switch {
			case err == nil:
				stored++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("concurrent put: %v, want nil or ErrConflict", err)
			}
		}
		if stored != 1 {
			t.Errorf("%d of %d concurrent puts of one key stored it, want exactly 1", stored, n)
		}
	}},
	{"UnknownOrg", func(t *testing.T, b *bundle) {
		k := newIdempotencyKey(model.NewID(), "k1", 10)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.PutIdempotencyKey(b.ctx, &k, at(0)) }), store.ErrNotFound)
	}},
}
