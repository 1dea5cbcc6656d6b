package storetest

import (
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// registeringTrunk makes a trunk of orgID with registration settings and a
// contact user no other test uses (the column is unique deployment-wide).
func registeringTrunk(t *testing.T, b *bundle, orgID string) model.SIPTrunk {
	t.Helper()
	return newSIPTrunk(t, b, orgID, func(s *model.SIPTrunk) {
		s.Registration = &model.TrunkRegistration{
			Registrar: ptr("registrar.example.com:5080"), Transport: ptr(model.TransportTCP),
			Username: ptr("alice"), Password: []byte("sealed-registration"),
			ExpiresSeconds: 600, ContactUser: "c" + model.NewID()[24:], Enabled: true,
		}
	})
}

var sipRegistrationTests = []test{
	{"SettingsRoundTrip", func(t *testing.T, b *bundle) {
		s := registeringTrunk(t, b, b.org.ID)
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))
		s.Registration.Enabled, s.Registration.Registrar, s.Registration.Password = false, nil, nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &s) })
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))
		s.Registration = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &s) })
		wantEqual(t, s, getSIPTrunk(t, b, b.org.ID, s.ID))
		wantIs(t, readErr(b, func(tx store.Tx) (model.SIPTrunk, error) {
			return tx.GetSIPTrunkByContactUser(b.ctx, "nobody-registers-this")
		}), store.ErrNotFound)
	}},
	{"ContactUserUnique", func(t *testing.T, b *bundle) {
		s := registeringTrunk(t, b, b.org.ID)
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			o := model.SIPTrunk{OrgID: b.other.ID, FriendlyName: "other", Transport: model.TransportUDP, Host: ptr("h"),
				InboundAllowedCIDRs: []string{}, CreatedAt: at(0), UpdatedAt: at(0),
				Registration: &model.TrunkRegistration{ExpiresSeconds: 60, ContactUser: s.Registration.ContactUser, Enabled: true}}
			return tx.CreateSIPTrunk(b.ctx, &o)
		}), store.ErrConflict)
		got := read(t, b, func(tx store.Tx) (model.SIPTrunk, error) {
			return tx.GetSIPTrunkByContactUser(b.ctx, s.Registration.ContactUser)
		})
		wantEqual(t, s, got)
	}},
	{"ListedAcrossOrganizations", func(t *testing.T, b *bundle) {
		mine, theirs := registeringTrunk(t, b, b.org.ID), registeringTrunk(t, b, b.other.ID)
		plain := newSIPTrunk(t, b, b.org.ID)
		found := map[string]bool{}
		for _, s := range read(t, b, func(tx store.Tx) ([]model.SIPTrunk, error) { return tx.RegisteringTrunks(b.ctx) }) {
			found[s.ID] = true
		}
		if !found[mine.ID] || !found[theirs.ID] || found[plain.ID] {
			t.Fatalf("RegisteringTrunks: mine %v, theirs %v, the plain trunk %v; want true, true, false", found[mine.ID], found[theirs.ID], found[plain.ID])
		}
	}},
	{"Lease", func(t *testing.T, b *bundle) {
		s := registeringTrunk(t, b, b.org.ID)
		now := time.Now().UTC().Truncate(time.Millisecond)
		claim := func(owner string, at time.Time, force bool) bool {
			var ok bool
			b.update(t, func(tx store.Tx) (err error) {
				ok, err = tx.ClaimSIPRegistration(b.ctx, s.OrgID, s.ID, owner, at, at.Add(time.Minute), force)
				return err
			})
			return ok
		}
		if !claim("node-a", now, false) {
			t.Fatal("a free registration was not claimed")
		}
		if claim("node-b", now.Add(30*time.Second), false) {
			t.Fatal("node-b took a registration node-a holds")
		}
		if !claim("node-a", now.Add(30*time.Second), false) {
			t.Fatal("node-a could not renew its own hold")
		}
		exp, msg := now.Add(time.Hour), "503 Service Unavailable"
		b.update(t, func(tx store.Tx) error {
			return tx.SetSIPRegistrationStatus(b.ctx, s.OrgID, s.ID, "node-a",
				model.RegistrationStatus{State: model.RegistrationFailed, ExpiresAt: &exp, LastError: &msg})
		})
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.SetSIPRegistrationStatus(b.ctx, s.OrgID, s.ID, "node-b", model.RegistrationStatus{State: model.RegistrationRegistered})
		}), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.SetSIPRegistrationStatus(b.ctx, b.other.ID, s.ID, "node-a", model.RegistrationStatus{State: model.RegistrationRegistered})
		}), store.ErrNotFound)
		got := getSIPTrunk(t, b, b.org.ID, s.ID).RegistrationStatus
		until := now.Add(30 * time.Second).Add(time.Minute)
		wantEqual(t, model.RegistrationStatus{State: model.RegistrationFailed, ExpiresAt: &exp, LastError: &msg, Owner: ptr("node-a"), LeaseUntil: &until}, got)

		// Settings written by the API leave the status alone.
		u := getSIPTrunk(t, b, b.org.ID, s.ID)
		u.FriendlyName = "renamed"
		b.update(t, func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &u) })
		wantEqual(t, got, getSIPTrunk(t, b, b.org.ID, s.ID).RegistrationStatus)

		if !claim("node-b", until.Add(time.Second), false) {
			t.Fatal("node-b could not take over once node-a's lease ended")
		}
		if !claim("node-a", until.Add(2*time.Second), true) {
			t.Fatal("a forced claim did not take the registration")
		}
		b.update(t, func(tx store.Tx) error {
			return tx.ReleaseSIPRegistration(b.ctx, s.OrgID, s.ID, "node-b", model.RegistrationUnregistered) // not node-b's any more: no change
		})
		if o := getSIPTrunk(t, b, b.org.ID, s.ID).RegistrationStatus.Owner; o == nil || *o != "node-a" {
			t.Fatalf("owner after a release by a non-holder = %v, want node-a", o)
		}
		b.update(t, func(tx store.Tx) error {
			return tx.ReleaseSIPRegistration(b.ctx, s.OrgID, s.ID, "node-a", model.RegistrationUnregistered)
		})
		wantEqual(t, model.RegistrationStatus{State: model.RegistrationUnregistered}, getSIPTrunk(t, b, b.org.ID, s.ID).RegistrationStatus)

		plain := newSIPTrunk(t, b, b.org.ID)
		var ok bool
		b.update(t, func(tx store.Tx) (err error) {
			ok, err = tx.ClaimSIPRegistration(b.ctx, plain.OrgID, plain.ID, "node-a", now, now.Add(time.Minute), true)
			return err
		})
		if ok {
			t.Fatal("claimed the registration of a trunk without registration settings")
		}
	}},
	{"PhoneNumbersOfTrunk", func(t *testing.T, b *bundle) {
		s := newSIPTrunk(t, b, b.org.ID)
		n := newPhoneNumber(t, b, b.org.ID, "+15550100001", func(n *model.PhoneNumber) { n.SIPTrunkID = &s.ID })
		newPhoneNumber(t, b, b.org.ID, "+15550100002")
		got := read(t, b, func(tx store.Tx) ([]model.PhoneNumber, error) {
			rows, _, err := tx.ListPhoneNumbers(b.ctx, b.org.ID, store.PhoneNumberFilter{Page: store.Page{Number: 1, Size: 10}, SIPTrunkID: s.ID})
			return rows, err
		})
		wantEqual(t, []model.PhoneNumber{n}, got)
	}},
}
