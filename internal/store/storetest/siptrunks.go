package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func getSIPTrunk(t *testing.T, b *bundle, orgID, id string) model.SIPTrunk {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(b.ctx, orgID, id) })
}

var sipTrunkTests = []test{
	{"AnyInboundAuthTrunk", func(t *testing.T, b *bundle) {
		anyAuth := func() bool {
			return read(t, b, func(tx store.Tx) (bool, error) { return tx.AnyInboundAuthTrunk(b.ctx) })
		}
		if anyAuth() {
			t.Fatal("no trunk yet, but one requires authentication")
		}
		newSIPTrunk(t, b, b.org.ID)
		if anyAuth() {
			t.Fatal("an open trunk reported as requiring authentication")
		}
		newSIPTrunk(t, b, b.other.ID, func(s *model.SIPTrunk) {
			s.InboundUsername, s.InboundPassword = ptr("pbx"), []byte("sealed")
		})
		if !anyAuth() {
			t.Fatal("another organization's authenticated trunk not seen (the answer is deployment-wide)")
		}
	}},
	{"CRUD", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID, func(s *model.SIPTrunk) {
			s.Transport = model.TransportTLS
			s.Username = ptr("user")
			s.Password = []byte("sealed-password")
			s.InboundUsername = ptr("inbound")
			s.InboundPassword = []byte("sealed-inbound")
			s.InboundAllowedCIDRs = []string{"203.0.113.0/24", "2001:db8::/32"}
			s.CallsPerSecond = ptr(2.5)
		})
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))

		s.FriendlyName = "backup carrier"
		s.Host, s.Port, s.Username, s.CallsPerSecond = nil, nil, nil, nil
		s.Password, s.InboundPassword = nil, nil
		s.InboundAllowedCIDRs = []string{}
		s.UpdatedAt = at(11)
		b.update(t, func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &s) })
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))
		s.CallsPerSecond = ptr(0.0) // unlimited, not the default
		b.update(t, func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &s) })
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))

		b.update(t, func(tx store.Tx) error { return tx.DeleteSIPTrunk(b.ctx, b.org.ID, s.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(b.ctx, b.org.ID, s.ID) }), store.ErrNotFound)
	}},
	{"Loopback", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID, func(s *model.SIPTrunk) {
			s.Transport, s.Host, s.Port, s.InboundAllowedCIDRs = model.TransportLoopback, nil, nil, nil
		})
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))
	}},
	{"SecretsNilAndEmpty", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID, func(s *model.SIPTrunk) { s.Password, s.InboundPassword = []byte{}, nil })
		got := getSIPTrunk(t, b, b.org.ID, s.ID)
		if got.Password != nil || got.InboundPassword != nil {
			t.Fatalf("passwords = %#v, %#v; want nil", got.Password, got.InboundPassword)
		}
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID)
		for _, k := range []struct{ org, id string }{
			{b.other.ID, s.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(b.ctx, k.org, k.id) }), store.ErrNotFound)
			u := s
			u.OrgID, u.ID, u.FriendlyName = k.org, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteSIPTrunk(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))
	}},
	{"GetSIPTrunks", func(t *testing.T, b *bundle) {
		s1 := newSIPTrunk(t, b, b.org.ID)
		s2 := newSIPTrunk(t, b, b.org.ID)
		theirs := newSIPTrunk(t, b, b.other.ID)
		got := read(t, b, func(tx store.Tx) ([]model.SIPTrunk, error) {
			return tx.GetSIPTrunks(b.ctx, b.org.ID, []string{s1.ID, theirs.ID, s2.ID, model.NewID()})
		})
		wantEqual(t, []model.SIPTrunk{s1, s2}, got, cmpopts.SortSlices(func(x, y model.SIPTrunk) bool { return x.ID < y.ID }))
		empty := read(t, b, func(tx store.Tx) ([]model.SIPTrunk, error) { return tx.GetSIPTrunks(b.ctx, b.org.ID, []string{}) })
		if empty == nil || len(empty) != 0 {
			t.Fatalf("GetSIPTrunks([]) = %#v, want empty", empty)
		}
	}},
	{"List", func(t *testing.T, b *bundle) {
		var rows []created
		for _, sec := range []int{4, 4, 1, 9} {
			s := newSIPTrunk(t, b, b.org.ID, func(s *model.SIPTrunk) { s.CreatedAt = at(sec) })
			rows = append(rows, created{s.ID, s.CreatedAt})
		}
		newSIPTrunk(t, b, b.other.ID)
		checkPaging(t, oldestFirst(rows), func(p store.Page) ([]string, int) {
			var total int
			got := read(t, b, func(tx store.Tx) ([]model.SIPTrunk, error) {
				rows, n, err := tx.ListSIPTrunks(b.ctx, b.org.ID, p)
				total = n
				return rows, err
			})
			return ids(got, func(s model.SIPTrunk) string { return s.ID }), total
		})
	}},
}
