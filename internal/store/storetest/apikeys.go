package storetest

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var apiKeyTests = []test{
	{"CreateGetByHash", func(t *testing.T, b *bundle) {
		k := newAPIKey(t, b, b.org.ID, func(k *model.APIKey) {
			k.LastUsedAt = ptr(at(30))
		})
		got := read(t, b, func(tx store.Tx) (model.APIKey, error) { return tx.GetAPIKeyByHash(b.ctx, k.Hash) })
		wantEqual(t, k, got)
		wantIs(t, readErr(b, func(tx store.Tx) (model.APIKey, error) {
			return tx.GetAPIKeyByHash(b.ctx, []byte("unknown"))
		}), store.ErrNotFound)
	}},
	{"DuplicateHash", func(t *testing.T, b *bundle) {
		k := newAPIKey(t, b, b.org.ID)
		err := b.writeErr(func(tx store.Tx) error {
			return tx.CreateAPIKey(b.ctx, &model.APIKey{OrgID: b.other.ID, Name: "copy", Prefix: "pk", Hash: k.Hash})
		})
		wantIs(t, err, store.ErrConflict)
	}},
	{"UnknownOrg", func(t *testing.T, b *bundle) {
		err := b.writeErr(func(tx store.Tx) error {
			return tx.CreateAPIKey(b.ctx, &model.APIKey{OrgID: model.NewID(), Name: "orphan", Prefix: "pk", Hash: []byte("h")})
		})
		wantIs(t, err, store.ErrNotFound)
	}},
	{"ListNewestFirst", func(t *testing.T, b *bundle) {
		k1 := newAPIKey(t, b, b.org.ID, func(k *model.APIKey) { k.CreatedAt = at(1) })
		k2 := newAPIKey(t, b, b.org.ID, func(k *model.APIKey) { k.CreatedAt = at(3) })
		k3 := newAPIKey(t, b, b.org.ID, func(k *model.APIKey) { k.CreatedAt = at(2) })
		newAPIKey(t, b, b.other.ID)
		got := read(t, b, func(tx store.Tx) ([]model.APIKey, error) { return tx.ListAPIKeys(b.ctx, b.org.ID) })
		wantEqual(t, []model.APIKey{k2, k3, k1}, got)
		none := read(t, b, func(tx store.Tx) ([]model.APIKey, error) { return tx.ListAPIKeys(b.ctx, model.NewID()) })
		if none == nil || len(none) != 0 {
			t.Fatalf("keys of an unknown org = %#v, want empty", none)
		}
	}},
	{"Revoke", func(t *testing.T, b *bundle) {
		k := newAPIKey(t, b, b.org.ID)
		before := model.Now()
		b.update(t, func(tx store.Tx) error { return tx.RevokeAPIKey(b.ctx, b.org.ID, k.ID) })
		got := read(t, b, func(tx store.Tx) (model.APIKey, error) { return tx.GetAPIKeyByHash(b.ctx, k.Hash) })
		if got.RevokedAt == nil || got.RevokedAt.Before(before) {
			t.Fatalf("revoked at %v, want a time >= %v", got.RevokedAt, before)
		}
		// Revoking again keeps the first time.
		first := *got.RevokedAt
		b.update(t, func(tx store.Tx) error { return tx.RevokeAPIKey(b.ctx, b.org.ID, k.ID) })
		got = read(t, b, func(tx store.Tx) (model.APIKey, error) { return tx.GetAPIKeyByHash(b.ctx, k.Hash) })
		wantEqual(t, first, *got.RevokedAt)
	}},
	{"RevokeScoped", func(t *testing.T, b *bundle) {
		k := newAPIKey(t, b, b.org.ID)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.RevokeAPIKey(b.ctx, b.other.ID, k.ID) }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.RevokeAPIKey(b.ctx, b.org.ID, model.NewID()) }), store.ErrNotFound)
		got := read(t, b, func(tx store.Tx) (model.APIKey, error) { return tx.GetAPIKeyByHash(b.ctx, k.Hash) })
		if got.RevokedAt != nil {
			t.Fatalf("key revoked through another organization")
		}
	}},
	{"Count", func(t *testing.T, b *bundle) {
		wantEqual(t, 0, read(t, b, func(tx store.Tx) (int, error) { return tx.CountAPIKeys(b.ctx) }))
		newAPIKey(t, b, b.org.ID)
		newAPIKey(t, b, b.other.ID)
		wantEqual(t, 2, read(t, b, func(tx store.Tx) (int, error) { return tx.CountAPIKeys(b.ctx) }))
	}},
}
