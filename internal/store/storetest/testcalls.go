package storetest

import (
	"maps"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// testCallTests check what test runs' calls need of the store: simulated
// callers hidden from every agent query but the call plane's, and the
// second line a test attempt's caller leg reserves for its far end.
var testCallTests = []test{
	{"SimulatedCallersHidden", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		agent := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "under test" })
		sim := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.Name = "caller"; a.SimulatedCaller = true })
		notFound := func(err error) { t.Helper(); wantIs(t, err, store.ErrNotFound) }

		notFound(readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgent(b.ctx, b.org.ID, sim.ID) }))
		notFound(readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgentByID(b.ctx, sim.ID) }))
		wantEqual(t, agent, read(t, b, func(tx store.Tx) (model.Agent, error) { return tx.GetAgentByID(b.ctx, agent.ID) }))
		wantEqual(t, []model.Agent{agent}, read(t, b, func(tx store.Tx) ([]model.Agent, error) {
			return tx.GetAgents(b.ctx, b.org.ID, []string{agent.ID, sim.ID})
		}))
		for _, f := range []store.AgentFilter{{}, {Status: model.AgentActive}, {FolderID: store.FolderNone}, {Query: "caller"}} {
			var total int
			got := read(t, b, func(tx store.Tx) (agents []model.Agent, err error) {
				agents, total, err = tx.ListAgents(b.ctx, b.org.ID, f)
				return agents, err
			})
			var want []model.Agent
			if f.Query == "" {
				want = []model.Agent{agent}
			}
			wantEqual(t, len(want), total)
			wantEqual(t, len(want), len(got))
			if len(want) > 0 {
				wantEqual(t, want, got)
			}
		}
		changed := sim
		changed.Name = "renamed"
		notFound(b.writeErr(func(tx store.Tx) error { return tx.UpdateAgent(b.ctx, &changed) }))
		notFound(b.writeErr(func(tx store.Tx) error { return tx.SetAgentKnowledgeBases(b.ctx, b.org.ID, sim.ID, []string{kb.ID}) }))
		notFound(b.writeErr(func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, sim.ID) }))

		// The call plane reads it as it was created, and only in its
		// organization.
		wantEqual(t, sim, read(t, b, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(b.ctx, b.org.ID, sim.ID) }))
		wantEqual(t, agent, read(t, b, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(b.ctx, b.org.ID, agent.ID) }))
		notFound(readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(b.ctx, b.other.ID, sim.ID) }))
		notFound(readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(b.ctx, b.org.ID, model.NewID()) }))
		notFound(readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(b.ctx, b.org.ID, "not-a-uuid") }))
	}},
	{"DeleteSimulatedCaller", func(t *testing.T, b *bundle) {
		agent := newAgent(t, b, b.org.ID)
		sim := newAgent(t, b, b.org.ID, func(a *model.Agent) { a.SimulatedCaller = true })
		del := func(orgID, id string) error {
			return b.writeErr(func(tx store.Tx) error { return tx.DeleteSimulatedCaller(b.ctx, orgID, id) })
		}
		wantIs(t, del(b.org.ID, agent.ID), store.ErrNotFound)
		wantEqual(t, agent, getAgent(t, b, b.org.ID, agent.ID))
		wantIs(t, del(b.other.ID, sim.ID), store.ErrNotFound)
		wantIs(t, del(b.org.ID, "not-a-uuid"), store.ErrNotFound)
		if err := del(b.org.ID, sim.ID); err != nil {
			t.Fatal(err)
		}
		wantIs(t, readErr(b, func(tx store.Tx) (model.Agent, error) { return tx.GetCallAgent(b.ctx, b.org.ID, sim.ID) }), store.ErrNotFound)
		wantIs(t, del(b.org.ID, sim.ID), store.ErrNotFound)
	}},
	{"WeightedLiveCount", func(t *testing.T, b *bundle) {
		live := func(orgID string) int {
			t.Helper()
			return read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, orgID) })
		}
		lines := func() store.Lines {
			return read(t, b, func(tx store.Tx) (store.Lines, error) { return tx.CountLines(b.ctx, b.org.ID) })
		}
		reserving := func(c *model.Call) { c.ReservesLine = true }
		caller := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallQueued), reserving)
		wantEqual(t, store.Lines{Queued: true}, lines())
		setStatus(t, b, caller, model.CallInitiated)
		wantEqual(t, store.Lines{Live: 2}, lines())
		setStatus(t, b, caller, model.CallRinging)
		wantEqual(t, 2, live(b.org.ID))
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress))
		wantEqual(t, 3, live(b.org.ID))
		// Created live, a reserving call takes two lines at once; ended, it
		// gives both back.
		other := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated), reserving)
		wantEqual(t, 5, live(b.org.ID))
		setStatus(t, b, other, model.CallFailed)
		wantEqual(t, 3, live(b.org.ID))
		// Released, the reservation is one line less; a caller that ends
		// after its release gives back the one it still holds.
		wantEqual(t, true, release(t, b, b.org.ID, caller.ID))
		wantEqual(t, 2, live(b.org.ID))
		setStatus(t, b, caller, model.CallCompleted)
		wantEqual(t, 1, live(b.org.ID))
		// A reserving call created final holds nothing.
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallFailed), reserving)
		wantEqual(t, 1, live(b.org.ID))
		wantEqual(t, 0, live(b.other.ID))
	}},
	{"ReleaseReservedLine", func(t *testing.T, b *bundle) {
		caller := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallRinging), func(c *model.Call) { c.ReservesLine = true })
		plain := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallRinging))
		ended := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallQueued), func(c *model.Call) { c.ReservesLine = true })
		setStatus(t, b, ended, model.CallInitiated)
		setStatus(t, b, ended, model.CallCanceled)
		wantEqual(t, 3, read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) }))

		wantEqual(t, false, release(t, b, b.other.ID, caller.ID)) // another organization's
		wantEqual(t, false, release(t, b, b.org.ID, plain.ID))    // reserves nothing
		wantEqual(t, false, release(t, b, b.org.ID, ended.ID))    // gave it back when it ended
		wantEqual(t, false, release(t, b, b.org.ID, model.NewID()))
		wantEqual(t, false, release(t, b, b.org.ID, "not-a-uuid"))
		wantEqual(t, true, getCall(t, b, b.org.ID, caller.ID).ReservesLine)
		wantEqual(t, true, release(t, b, b.org.ID, caller.ID))
		wantEqual(t, false, release(t, b, b.org.ID, caller.ID))
		got := getCall(t, b, b.org.ID, caller.ID)
		wantEqual(t, false, got.ReservesLine)
		wantEqual(t, model.CallRinging, got.Status)
		wantEqual(t, 2, read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) }))
	}},
	{"WritersLeaveTheReservationAlone", func(t *testing.T, b *bundle) {
		caller := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated), func(c *model.Call) { c.ReservesLine = true })
		count := func() int {
			return read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) })
		}
		// A writer that read the call before the release writes it back
		// with ReservesLine still true: the release stands.
		stale := getCall(t, b, b.org.ID, caller.ID)
		wantEqual(t, true, release(t, b, b.org.ID, caller.ID))
		stale.Status = model.CallRinging
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &stale) })
		wantEqual(t, false, getCall(t, b, b.org.ID, caller.ID).ReservesLine)
		wantEqual(t, 1, count())
		before := getCall(t, b, b.org.ID, caller.ID)
		after := before
		after.Variables, after.Metrics = maps.Clone(before.Variables), maps.Clone(before.Metrics)
		after.Status, after.ReservesLine = model.CallInProgress, true
		b.update(t, func(tx store.Tx) error { return tx.ChangeCall(b.ctx, &before, &after) })
		got := getCall(t, b, b.org.ID, caller.ID)
		wantEqual(t, model.CallInProgress, got.Status)
		wantEqual(t, false, got.ReservesLine)
		wantEqual(t, 1, count())
		// Nor does either writer take a reservation away.
		held := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated), func(c *model.Call) { c.ReservesLine = true })
		cur := getCall(t, b, b.org.ID, held.ID)
		cur.Status, cur.ReservesLine = model.CallRinging, false
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &cur) })
		before = getCall(t, b, b.org.ID, held.ID)
		after = before
		after.Variables, after.Metrics = maps.Clone(before.Variables), maps.Clone(before.Metrics)
		after.Status, after.ReservesLine = model.CallInProgress, false
		b.update(t, func(tx store.Tx) error { return tx.ChangeCall(b.ctx, &before, &after) })
		got = getCall(t, b, b.org.ID, held.ID)
		wantEqual(t, model.CallInProgress, got.Status)
		wantEqual(t, true, got.ReservesLine)
		wantEqual(t, 3, count())
	}},
	{"GetCallByLoopbackCaller", func(t *testing.T, b *bundle) {
		caller := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress), func(c *model.Call) { c.ReservesLine = true })
		lookup := func(orgID, callerID string) (model.Call, error) {
			var c model.Call
			err := b.view(func(tx store.Tx) (err error) { c, err = tx.GetCallByLoopbackCaller(b.ctx, orgID, callerID); return err })
			return c, err
		}
		_, err := lookup(b.org.ID, caller.ID)
		wantIs(t, err, store.ErrNotFound)
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress), func(c *model.Call) { c.Direction = model.Inbound })
		in := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress), func(c *model.Call) {
			c.Direction, c.LoopbackCallerID = model.Inbound, &caller.ID
		})
		got, err := lookup(b.org.ID, caller.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, in, got)
		wantEqual(t, in, getCall(t, b, b.org.ID, in.ID))
		_, err = lookup(b.other.ID, caller.ID)
		wantIs(t, err, store.ErrNotFound)
		_, err = lookup(b.org.ID, "not-a-uuid")
		wantIs(t, err, store.ErrNotFound)
		bad := model.Call{OrgID: b.org.ID, AgentID: model.NewID(), Direction: model.Inbound, Status: model.CallCompleted,
			FromNumber: "+15550001000", ToNumber: "+15550002000", LoopbackCallerID: ptr("not-a-uuid")}
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateCall(b.ctx, &bad) }), store.ErrNotFound)
	}},
}

// release gives up the line call id reserves and says whether it did.
func release(t *testing.T, b *bundle, orgID, id string) bool {
	t.Helper()
	var ok bool
	b.update(t, func(tx store.Tx) (err error) { ok, err = tx.ReleaseReservedLine(b.ctx, orgID, id); return err })
	return ok
}

// LiveCountOnDelete checks that deleting calls (no Tx method does; an
// organization's deletion or an operator's SQL does) takes the lines they
// held off the live count, a reserving call's two included. deleteCalls
// deletes the calls with ids in one statement.
func LiveCountOnDelete(t *testing.T, st store.Store, deleteCalls func(ids ...string) error) {
	b := &bundle{ctx: t.Context(), st: st}
	b.org = newOrg(t, b, "acme")
	reserving := func(c *model.Call) { c.ReservesLine = true }
	held := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress), reserving)
	released := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallRinging), reserving)
	plain := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInitiated))
	over := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallCompleted), reserving)
	kept := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress))
	wantEqual(t, true, release(t, b, b.org.ID, released.ID))
	live := func() int {
		return read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) })
	}
	wantEqual(t, 5, live())
	if err := deleteCalls(held.ID, released.ID, over.ID); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, 2, live())
	if err := deleteCalls(plain.ID); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, 1, live())
	wantEqual(t, kept, getCall(t, b, b.org.ID, kept.ID))
}
