package storetest

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var phoneNumberTests = []test{
	{"CRUD", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID)
		a := newAgent(t, b, b.org.ID)
		n := newPhoneNumber(t, b, b.org.ID, "+15550100001", func(n *model.PhoneNumber) {
			n.SIPTrunkID, n.AgentID = &s.ID, &a.ID
		})
		wantEqual(t, n, getPhoneNumber(t, b, b.org.ID, n.ID))

		n.E164, n.AgentID, n.SIPTrunkID, n.UpdatedAt = "+15550100002", nil, nil, at(3)
		b.update(t, func(tx store.Tx) error { return tx.UpdatePhoneNumber(b.ctx, &n) })
		wantEqual(t, n, getPhoneNumber(t, b, b.org.ID, n.ID))

		b.update(t, func(tx store.Tx) error { return tx.DeletePhoneNumber(b.ctx, b.org.ID, n.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.PhoneNumber, error) { return tx.GetPhoneNumber(b.ctx, b.org.ID, n.ID) }), store.ErrNotFound)
	}},
	{"ByE164AcrossOrgs", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.other.ID)
		n := newPhoneNumber(t, b, b.other.ID, "+442071838750", func(n *model.PhoneNumber) { n.AgentID = &a.ID })
		got := read(t, b, func(tx store.Tx) (model.PhoneNumber, error) { return tx.GetPhoneNumberByE164(b.ctx, "+442071838750") })
		wantEqual(t, n, got)
		wantIs(t, readErr(b, func(tx store.Tx) (model.PhoneNumber, error) { return tx.GetPhoneNumberByE164(b.ctx, "+10000000000") }), store.ErrNotFound)
	}},
	{"DuplicateE164", func(t *testing.T, b *bundle) {
		newPhoneNumber(t, b, b.org.ID, "+15550100001")
		for _, orgID := range []string{b.org.ID, b.other.ID} {
			dup := model.PhoneNumber{OrgID: orgID, E164: "+15550100001"}
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreatePhoneNumber(b.ctx, &dup) }), store.ErrConflict)
		}
		theirs := newPhoneNumber(t, b, b.other.ID, "+15550100002")
		theirs.E164 = "+15550100001"
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdatePhoneNumber(b.ctx, &theirs) }), store.ErrConflict)
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		n := newPhoneNumber(t, b, b.org.ID, "+15550100001")
		for _, k := range []struct{ org, id string }{
			{b.other.ID, n.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.PhoneNumber, error) { return tx.GetPhoneNumber(b.ctx, k.org, k.id) }), store.ErrNotFound)
			u := n
			u.OrgID, u.ID, u.E164 = k.org, k.id, "+15550199999"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdatePhoneNumber(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeletePhoneNumber(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, n, getPhoneNumber(t, b, b.org.ID, n.ID))
	}},
	{"ReferencesStayInOrg", func(t *testing.T, b *bundle) {
		theirAgent := newAgent(t, b, b.other.ID)
		theirTrunk := newSIPTrunk(t, b, b.other.ID)
		for _, ref := range []func(*model.PhoneNumber){
			func(n *model.PhoneNumber) { n.AgentID = &theirAgent.ID },
			func(n *model.PhoneNumber) { n.SIPTrunkID = &theirTrunk.ID },
		} {
			n := model.PhoneNumber{OrgID: b.org.ID, E164: "+15550100009"}
			ref(&n)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreatePhoneNumber(b.ctx, &n) }), store.ErrNotFound)
		}
		n := newPhoneNumber(t, b, b.org.ID, "+15550100001")
		n.AgentID = &theirAgent.ID
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdatePhoneNumber(b.ctx, &n) }), store.ErrNotFound)
	}},
	{"List", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		var rows, assigned []created
		for i, sec := range []int{2, 8, 8, 1, 5} {
			n := newPhoneNumber(t, b, b.org.ID, "+1555010000"+string(rune('0'+i)), func(n *model.PhoneNumber) {
				n.CreatedAt = at(sec)
				if i%2 == 0 {
					n.AgentID = &a.ID
				}
			})
			rows = append(rows, created{n.ID, n.CreatedAt})
			if n.AgentID != nil {
				assigned = append(assigned, created{n.ID, n.CreatedAt})
			}
		}
		newPhoneNumber(t, b, b.other.ID, "+15550109999")
		list := func(agentID string) func(store.Page) ([]string, int) {
			return func(p store.Page) ([]string, int) {
				var total int
				got := read(t, b, func(tx store.Tx) ([]model.PhoneNumber, error) {
					rows, n, err := tx.ListPhoneNumbers(b.ctx, b.org.ID, store.PhoneNumberFilter{Page: p, AgentID: agentID})
					total = n
					return rows, err
				})
				return ids(got, func(n model.PhoneNumber) string { return n.ID }), total
			}
		}
		checkPaging(t, oldestFirst(rows), list(""))
		checkPaging(t, oldestFirst(assigned), list(a.ID))
		checkPaging(t, nil, list(model.NewID()))
		checkPaging(t, nil, list("not-a-uuid"))
	}},
	{"AgentPhoneNumbers", func(t *testing.T, b *bundle) {
		a1 := newAgent(t, b, b.org.ID)
		a2 := newAgent(t, b, b.org.ID)
		idle := newAgent(t, b, b.org.ID)
		n3 := newPhoneNumber(t, b, b.org.ID, "+15550100003", func(n *model.PhoneNumber) { n.AgentID = &a1.ID })
		n1 := newPhoneNumber(t, b, b.org.ID, "+15550100001", func(n *model.PhoneNumber) { n.AgentID = &a1.ID })
		n2 := newPhoneNumber(t, b, b.org.ID, "+15550100002", func(n *model.PhoneNumber) { n.AgentID = &a2.ID })
		newPhoneNumber(t, b, b.org.ID, "+15550100004") // unassigned
		got := read(t, b, func(tx store.Tx) (map[string][]model.PhoneNumber, error) {
			return tx.AgentPhoneNumbers(b.ctx, b.org.ID, []string{a1.ID, a2.ID, idle.ID})
		})
		wantEqual(t, map[string][]model.PhoneNumber{a1.ID: {n1, n3}, a2.ID: {n2}}, got)
		theirs := read(t, b, func(tx store.Tx) (map[string][]model.PhoneNumber, error) {
			return tx.AgentPhoneNumbers(b.ctx, b.other.ID, []string{a1.ID})
		})
		wantEqual(t, map[string][]model.PhoneNumber{}, theirs)
	}},
}
