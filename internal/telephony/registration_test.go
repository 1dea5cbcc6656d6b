package telephony

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptest"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/telephony/registration"
)

// TestRegistrationWithKamailio keeps a trunk registered at a real
// registrar (Kamailio, granting 4 s): it registers, refreshes before the
// binding expires, fails while the registrar is down and registers again
// once it is back (the registrar forgot every binding), receives a call
// the registrar routes to the registered contact, and unregisters when the
// registration is disabled and when the keeper stops.
func TestRegistrationWithKamailio(t *testing.T) {
	siptest.RequireSipp(t)
	kam := siptest.StartKamailio(t, siptest.KamailioOptions{Password: "reg-s3cret", MaxExpires: 4})
	e := newEnv(t)
	a := e.agent()
	tr := e.trunk(kam.Addr(), func(s *model.SIPTrunk) {
		s.Registration = &model.TrunkRegistration{
			Username: ptrTo("alice"), Password: e.phone.Box.Seal("reg-s3cret"),
			ExpiresSeconds: 3600, ContactUser: "alice", Enabled: true,
		}
	})
	n := e.number("+15557770001", &a.ID, &tr.ID)

	keeper := registration.New(registration.Options{
		Store: e.st, Box: e.phone.Box, Node: "test", ClaimAll: true, LeaseTTL: 3 * time.Second, Sync: 100 * time.Millisecond,
		Bind:       func(c sipua.RegistrationConfig) (registration.Binding, error) { return e.ua.NewRegistration(c) },
		MinBackoff: 100 * time.Millisecond, MaxBackoff: 400 * time.Millisecond, RequestTimeout: time.Second,
		Logger: e.phone.log(),
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { keeper.Run(ctx); close(done) }()
	stopKeeper := func() { stop(); <-done }
	t.Cleanup(stopKeeper)

	status := func() model.RegistrationStatus {
		t.Helper()
		s, err := store.Read(e.ctx, e.st, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(e.ctx, e.org.ID, tr.ID) })
		if err != nil {
			t.Fatal(err)
		}
		return s.RegistrationStatus
	}
	waitStatus := func(what string, cond func(model.RegistrationStatus) bool) model.RegistrationStatus {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st := status()
			if cond(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("waited for %s; registration is %q (expires %v, error %q)", what, st.State, st.ExpiresAt, deref(st.LastError))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	registeredAfter := func(what string, since time.Time) model.RegistrationStatus {
		t.Helper()
		return waitStatus(what, func(st model.RegistrationStatus) bool {
			return st.State == model.RegistrationRegistered && st.ExpiresAt != nil && st.ExpiresAt.After(since)
		})
	}

	// Registers: the registrar's 4 s, not the 3600 s asked for.
	began := time.Now()
	first := registeredAfter("registered", began)
	if d := first.ExpiresAt.Sub(began); d > 6*time.Second {
		t.Fatalf("expires %s after the start, want the registrar's 4 s", d)
	}
	if first.LastError != nil || keeper.States()[model.RegistrationRegistered] != 1 {
		t.Fatalf("registered with error %q, states %v", deref(first.LastError), keeper.States())
	}
	// Refreshes before it expires, twice.
	second := registeredAfter("the first refresh", *first.ExpiresAt)
	registeredAfter("the second refresh", *second.ExpiresAt)

	// A call sent to the registrar for alice reaches the agent on the
	// trunk's number, through the registered contact.
	callAlice := func() {
		t.Helper()
		before := len(e.calls())
		uac := siptest.UAC(t, "uac_call", kam.Addr(), siptest.Options{Service: "alice", Keys: map[string]string{"hold": "300"}})
		if err := uac.Wait(); err != nil {
			t.Fatalf("call to alice through the registrar: %v\n%s", err, kam.Output())
		}
		calls := e.calls()
		if len(calls) != before+1 {
			t.Fatalf("%d calls recorded, want %d", len(calls), before+1)
		}
		c := e.waitFinal(calls[0].ID)
		if c.Direction != model.Inbound || c.ToNumber != n.E164 || c.AgentID != a.ID || c.SIPTrunkID == nil || *c.SIPTrunkID != tr.ID {
			t.Fatalf("call = %s to %s, agent %s, trunk %v; want inbound to %s, agent %s, trunk %s",
				c.Direction, c.ToNumber, c.AgentID, c.SIPTrunkID, n.E164, a.ID, tr.ID)
		}
		wantEnd(t, c, model.CallCompleted, "USER_ENDED")
	}
	callAlice()

	// The registrar restarts, forgetting every binding: failed while it is
	// down, registered again once it is back, and calls reach us again.
	kam.Stop()
	down := time.Now()
	failed := waitStatus("failed while the registrar is down", func(st model.RegistrationStatus) bool {
		return st.State == model.RegistrationFailed
	})
	if failed.LastError == nil || !strings.Contains(*failed.LastError, "no answer") {
		t.Fatalf("lastError = %q, want the missing answer", deref(failed.LastError))
	}
	if err := kam.Start(); err != nil {
		t.Fatal(err)
	}
	back := registeredAfter("registered after the restart", down.Add(4*time.Second))
	if back.LastError != nil {
		t.Fatalf("lastError after recovery = %q", *back.LastError)
	}
	callAlice()

	// Disabled: unregistered at once (Expires: 0), the binding gone.
	tr.Registration.Enabled = false
	tr.UpdatedAt = model.Now()
	e.write(func(tx store.Tx) error { return tx.UpdateSIPTrunk(e.ctx, &tr) })
	waitStatus("unregistered", func(st model.RegistrationStatus) bool {
		return st.State == model.RegistrationUnregistered && st.Owner == nil
	})
	if got := strings.Count(kam.Output(), "expires 0"); got != 1 {
		t.Fatalf("%d un-REGISTERs seen by the registrar, want 1:\n%s", got, kam.Output())
	}
	// Enabled again, then the keeper stops (shutdown): unregistered again.
	tr.Registration.Enabled = true
	e.write(func(tx store.Tx) error { return tx.UpdateSIPTrunk(e.ctx, &tr) })
	registeredAfter("registered once enabled again", time.Now())
	stopKeeper()
	if st := status(); st.State != model.RegistrationUnregistered {
		t.Fatalf("after the keeper stopped the registration is %q", st.State)
	}
	if got := strings.Count(kam.Output(), "expires 0"); got != 2 {
		t.Fatalf("%d un-REGISTERs seen by the registrar, want 2", got)
	}
}

func ptrTo[T any](v T) *T { return &v }
