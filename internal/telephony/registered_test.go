package telephony

import (
	"errors"
	"testing"

	"github.com/parley-voice/parley/internal/model"
)

// TestRegisteredContactRouting: an INVITE to a registration's contact user
// goes to the trunk's number named in To, else to its only number.
func TestRegisteredContactRouting(t *testing.T) {
	e := newEnv(t)
	a, b := e.agent(), e.agent(func(a *model.Agent) { a.Name = "Sales" })
	registered := func(user string) func(*model.SIPTrunk) {
		return func(s *model.SIPTrunk) {
			s.Registration = &model.TrunkRegistration{Username: &user, ExpiresSeconds: 600, ContactUser: user, Enabled: true}
		}
	}
	single := e.trunk("127.0.0.1:5060", registered("single"))
	only := e.number("+15557770001", &a.ID, &single.ID)
	multi := e.trunk("127.0.0.1:5060", registered("multi"))
	e.number("+15557770002", &a.ID, &multi.ID)
	sales := e.number("+15557770003", &b.ID, &multi.ID)
	plain := e.trunk("127.0.0.1:5060")
	e.number("+15557770004", &b.ID, &plain.ID)

	for _, tc := range []struct {
		name, user, to string
		want           *model.PhoneNumber // nil: refused 404
	}{
		{"the only number, To naming the contact", "single", "single", &only},
		{"the only number, To naming another trunk's number", "single", "+15557770004", &only},
		{"To names one of the trunk's numbers", "multi", "+1 (555) 777-0003", &sales},
		{"URI parameters after the contact user", "multi;transport=tcp", "15557770003", &sales},
		{"several numbers, To names none", "multi", "multi", nil},
	} {
		r, err := e.phone.resolve(e.ctx, tc.user, tc.to, "")
		if tc.want == nil {
			var ref *refusal
			if !errors.As(err, &ref) || ref.code != 404 {
				t.Errorf("%s: %v, want a 404 refusal", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if r.number == nil || r.number.ID != tc.want.ID || r.to != tc.want.E164 || r.trunk == nil || r.agent.ID != *tc.want.AgentID {
			t.Errorf("%s: routed to %+v (to %s)", tc.name, r.number, r.to)
		}
	}
	// Not a contact user: routing by number as ever.
	if r, err := e.phone.resolve(e.ctx, "+15557770004", "x", ""); err != nil || r.number == nil || r.number.E164 != "+15557770004" {
		t.Errorf("by number: %+v, %v", r.number, err)
	}
	// Loopback calls (scoped to an organization) never take the contact route.
	if _, err := e.phone.resolve(e.ctx, "single", "single", e.org.ID); err == nil {
		t.Error("a loopback call was routed by contact user")
	}
}
