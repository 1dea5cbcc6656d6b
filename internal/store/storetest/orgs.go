package storetest

import (
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var orgTests = []test{
	{"CreateGet", func(t *testing.T, b *bundle) {
		o := newOrg(t, b, "initech", func(o *model.Organization) {
			o.ConcurrencyLimit = 3
			o.WebhookSecret = []byte{0, 1, 2, 255}
		})
		got := read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) })
		wantEqual(t, o, got)
		got = read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrgByName(b.ctx, "initech") })
		wantEqual(t, o, got)
	}},
	{"FillsIDAndTimes", func(t *testing.T, b *bundle) {
		o := model.Organization{Name: "fresh"}
		before := model.Now()
		b.update(t, func(tx store.Tx) error { return tx.CreateOrg(b.ctx, &o) })
		if !model.IsUUID(o.ID) {
			t.Fatalf("id = %q, want a UUID", o.ID)
		}
		if o.CreatedAt.Before(before) || o.UpdatedAt.Before(before) {
			t.Fatalf("times %v %v not filled with now (>= %v)", o.CreatedAt, o.UpdatedAt, before)
		}
		got := read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) })
		wantEqual(t, o, got)
	}},
	{"NotFound", func(t *testing.T, b *bundle) {
		wantIs(t, readErr(b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, model.NewID()) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, "not-a-uuid") }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrgByName(b.ctx, "ACME") }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.UpdateOrg(b.ctx, &model.Organization{ID: model.NewID(), Name: "ghost"})
		}), store.ErrNotFound)
	}},
	{"DuplicateName", func(t *testing.T, b *bundle) {
		err := b.writeErr(func(tx store.Tx) error { return tx.CreateOrg(b.ctx, &model.Organization{Name: "acme"}) })
		wantIs(t, err, store.ErrConflict)
		o := b.other
		o.Name = "acme"
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) }), store.ErrConflict)
	}},
	{"Update", func(t *testing.T, b *bundle) {
		o := b.org
		o.Name = "acme corp"
		o.ConcurrencyLimit = 25
		o.WebhookSecret = []byte("sealed")
		o.UpdatedAt = at(-60) // the store keeps the caller's time, even an earlier one
		b.update(t, func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) })
		got := read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) })
		wantEqual(t, o, got)

		o.WebhookSecret = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) })
		got = read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) })
		wantEqual(t, o, got)
	}},
	{"InboundReservePercent", func(t *testing.T, b *bundle) {
		// Unset at creation is the default; an update writes any share, none
		// included.
		wantEqual(t, model.DefaultInboundReservePercent, b.org.InboundReservePercent)
		wantEqual(t, 20, read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, b.org.ID) }).InboundReservePercent)
		o := newOrg(t, b, "reserved", func(o *model.Organization) { o.InboundReservePercent = 35 })
		wantEqual(t, 35, read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) }).InboundReservePercent)
		for _, pct := range []int{0, 90} {
			o.InboundReservePercent = pct
			b.update(t, func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) })
			wantEqual(t, o, read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) }))
			wantEqual(t, pct, read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.LockOrg(b.ctx, o.ID) }).InboundReservePercent)
		}
	}},
	{"UpdateKeepsCreatedAt", func(t *testing.T, b *bundle) {
		o := b.org
		o.CreatedAt = at(999)
		o.UpdatedAt = at(5)
		b.update(t, func(tx store.Tx) error { return tx.UpdateOrg(b.ctx, &o) })
		got := read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) })
		wantEqual(t, b.org.CreatedAt, got.CreatedAt)
		wantEqual(t, at(5), got.UpdatedAt)
	}},
	{"Count", func(t *testing.T, b *bundle) {
		wantEqual(t, 2, read(t, b, func(tx store.Tx) (int, error) { return tx.CountOrgs(b.ctx) }))
		newOrg(t, b, "third")
		wantEqual(t, 3, read(t, b, func(tx store.Tx) (int, error) { return tx.CountOrgs(b.ctx) }))
	}},
	{"SecretNilAndEmpty", func(t *testing.T, b *bundle) {
		empty := newOrg(t, b, "empty-secret", func(o *model.Organization) { o.WebhookSecret = []byte{} })
		none := newOrg(t, b, "no-secret")
		for _, id := range []string{empty.ID, none.ID} {
			got := read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, id) })
			if got.WebhookSecret != nil {
				t.Fatalf("secret = %#v, want nil", got.WebhookSecret)
			}
		}
	}},
	{"TimeRoundTrip", func(t *testing.T, b *bundle) {
		// A time in another zone with nanoseconds comes back in UTC, cut to
		// the millisecond; the caller's struct is normalized the same way.
		in := time.Date(2031, 12, 31, 23, 59, 59, 987654321, time.FixedZone("UTC+5", 5*3600))
		o := newOrg(t, b, "clock", func(o *model.Organization) { o.CreatedAt, o.UpdatedAt = in, in })
		want := time.Date(2031, 12, 31, 18, 59, 59, 987000000, time.UTC)
		got := read(t, b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(b.ctx, o.ID) })
		for _, ts := range []time.Time{got.CreatedAt, got.UpdatedAt, o.CreatedAt} {
			if !ts.Equal(want) || ts.Location() != time.UTC {
				t.Fatalf("time = %v (%v), want %v in UTC", ts, ts.Location(), want)
			}
		}
	}},
}
