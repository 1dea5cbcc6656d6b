package telephony

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// limit sets the organization's concurrency limit.
func (e *env) limit(n int) {
	e.t.Helper()
	e.org.ConcurrencyLimit = n
	e.write(func(tx store.Tx) error { return tx.UpdateOrg(e.ctx, &e.org) })
}

func (e *env) live() int {
	e.t.Helper()
	n, err := store.Read(e.ctx, e.st, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(e.ctx, e.org.ID) })
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// watchLive samples the live count until the returned stop is called,
// which returns the highest count seen.
func (e *env) watchLive() (stop func() int) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	most := 0
	wg.Go(func() {
		for {
			n, err := store.Read(e.ctx, e.st, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(e.ctx, e.org.ID) })
			if err == nil && n > most {
				most = n
			}
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	})
	return func() int {
		close(done)
		wg.Wait()
		return most
	}
}

// inboundOf waits for the inbound leg call callerID placed over the
// loopback trunk.
func (e *env) inboundOf(callerID string) model.Call {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := store.Read(e.ctx, e.st, func(tx store.Tx) (model.Call, error) {
			return tx.GetCallByLoopbackCaller(e.ctx, e.org.ID, callerID)
		})
		if err == nil {
			return c
		}
		if !errors.Is(err, store.ErrNotFound) {
			e.t.Fatal(err)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("no inbound leg of call %s", callerID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A test attempt's call: a simulated caller (no trunk of its own) rings the
// agent under test at agent-<uuid> with a limit of two lines. The caller
// reserved the second line, so the callee's leg is answered, not BUSY, and
// the two legs never hold more than the two lines.
func TestSimulatedCallerReachesAgentUnderTest(t *testing.T) {
	release := make(chan struct{})
	conv := convFunc(func(ctx context.Context, l *Live) {
		if l.Call.Direction == model.Outbound {
			select {
			case <-release:
				l.End(call.CauseEndCallTool)
			case <-l.Session.Done():
			case <-ctx.Done():
			}
			return
		}
		select {
		case <-l.Session.Done():
		case <-ctx.Done():
		}
	})
	e := newEnv(t, func(p *Phone, _ *callqueueOptions) { p.Conversation = conv })
	e.limit(2)
	callee := e.agent(func(a *model.Agent) { a.Name = "Under test" })
	sim := e.agent(func(a *model.Agent) { a.Name = "Simulated caller"; a.SimulatedCaller = true })
	mostLive := e.watchLive()

	out := model.Call{
		ID: model.NewID(), OrgID: e.org.ID, AgentID: sim.ID, AgentName: sim.Name, Direction: model.Outbound,
		FromNumber: "+15550001000", ToNumber: "agent-" + callee.ID, ReservesLine: true,
		Variables: map[string]any{}, Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	if err := e.q.Place(e.ctx, &out, false); err != nil || out.Status != model.CallInitiated {
		t.Fatalf("placed: %s, %v; want INITIATED", out.Status, err)
	}
	in := e.inboundOf(out.ID)
	if in.AgentID != callee.ID || in.Direction != model.Inbound || in.LoopbackCallerID == nil || *in.LoopbackCallerID != out.ID {
		t.Fatalf("inbound leg: agent %s direction %s loopback caller %v", in.AgentID, in.Direction, in.LoopbackCallerID)
	}
	inUp := e.waitFor(in.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress || call.IsFinal(c.Status) })
	outUp := e.waitFor(out.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress || call.IsFinal(c.Status) })
	if inUp.Status != model.CallInProgress || outUp.Status != model.CallInProgress {
		t.Fatalf("legs: caller %s (%s), callee %s (%s); want both IN_PROGRESS",
			outUp.Status, deref(outUp.ErrorMessage), inUp.Status, deref(inUp.ErrorMessage))
	}
	if outUp.ReservesLine {
		t.Error("the caller still reserves a line with its far end answered")
	}
	if n := e.live(); n != 2 {
		t.Errorf("live %d with both legs up, want 2", n)
	}
	close(release)
	wantEnd(t, e.waitFinal(out.ID), model.CallCompleted, call.CauseEndCallTool)
	wantEnd(t, e.waitFinal(in.ID), model.CallCompleted, call.CauseUserEnded)
	e.waitLegs(0)
	if most := mostLive(); most > 2 {
		t.Errorf("the live count reached %d, over the limit of 2", most)
	}
	if n := e.live(); n != 0 {
		t.Errorf("live %d once both legs ended, want 0", n)
	}
}

// A loopback INVITE's caller header counts only when the server signed it
// for that call in that organization: a forged or unsigned one, or one
// signed for another organization, leaves the inbound leg an ordinary call
// and the caller's reservation where it was.
func TestLoopbackCallerHeaderMustBeSigned(t *testing.T) {
	e := newEnv(t)
	e.limit(4)
	callee := e.agent(func(a *model.Agent) { a.Name = "Under test" })
	// A live caller leg that reserves a line, run by another (live) node.
	owner, until := "elsewhere", time.Now().Add(time.Hour)
	caller := model.Call{
		ID: model.NewID(), OrgID: e.org.ID, AgentID: model.NewID(), AgentName: "Caller", Direction: model.Outbound,
		Status: model.CallInProgress, FromNumber: "+15550001000", ToNumber: "agent-" + callee.ID, ReservesLine: true,
		LeaseOwner: &owner, LeaseExpiresAt: &until,
	}
	e.write(func(tx store.Tx) error { return tx.CreateCall(e.ctx, &caller) })

	// ring dials the callee over the loopback trunk with callerHeader and
	// returns its inbound record once answered, and the caller's.
	ring := func(callerHeader string) (model.Call, model.Call) {
		t.Helper()
		target, err := e.phone.target(Trunk{Transport: model.TransportLoopback}, e.org.ID, "", "agent-"+callee.ID)
		if err != nil {
			t.Fatal(err)
		}
		if callerHeader != "" {
			target.Headers[loopbackCallerHeader] = callerHeader
		}
		before := map[string]bool{}
		for _, c := range e.calls() {
			before[c.ID] = true
		}
		leg, err := e.ua.Dial(e.ctx, target, nil)
		if err != nil {
			t.Fatal(err)
		}
		var in model.Call
		for _, c := range e.calls() {
			if !before[c.ID] && c.Direction == model.Inbound {
				in = c
			}
		}
		if in.ID == "" {
			t.Fatal("no inbound record")
		}
		in = e.waitFor(in.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress })
		_ = leg.Hangup(e.ctx)
		e.waitFinal(in.ID)
		e.waitLegs(0)
		return in, e.get(caller.ID)
	}
	other := model.NewID()
	for name, header := range map[string]string{
		"forged":               caller.ID + ".0123456789abcdef",
		"unsigned":             caller.ID,
		"another organization": e.phone.loopbackCallerToken(other, caller.ID),
		"another call":         e.phone.loopbackCallerToken(e.org.ID, model.NewID())[:37] + e.phone.loopbackCallerToken(e.org.ID, caller.ID)[37:],
	} {
		in, c := ring(header)
		if in.LoopbackCallerID != nil {
			t.Errorf("%s caller header: the inbound leg names caller %s", name, *in.LoopbackCallerID)
		}
		if !c.ReservesLine {
			t.Fatalf("%s caller header released the caller's line", name)
		}
	}
	if n := e.live(); n != 2 {
		t.Fatalf("live %d, want the caller's 2", n)
	}
	in, c := ring(e.phone.loopbackCallerToken(e.org.ID, caller.ID))
	if in.LoopbackCallerID == nil || *in.LoopbackCallerID != caller.ID || c.ReservesLine {
		t.Fatalf("signed caller header: inbound names %v, caller reserves %v", in.LoopbackCallerID, c.ReservesLine)
	}
	if n := e.live(); n != 1 {
		t.Fatalf("live %d, want the caller's 1", n)
	}
}
