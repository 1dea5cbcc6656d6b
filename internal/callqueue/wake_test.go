package callqueue

import (
	"context"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// A line freed by another server sharing the database wakes this server's
// dispatcher (PostgreSQL LISTEN/NOTIFY), without waiting for its poll,
// which here never comes.
func TestLineFreedElsewhereWakesDispatch(t *testing.T) {
	open, ok := engines(t)["postgres"]
	if !ok {
		t.Skip("needs PostgreSQL (PARLEY_TEST_DATABASE_URL): SQLite has one server, whose calls wake its own dispatcher")
	}
	h := newHarness(t, open(t), 1, func(o *Options) { o.Poll = time.Hour })
	elsewhere := h.insertLive("node-b", time.Hour) // node-b's call holds the only line
	waiting := h.mustPlace("+14155550001")
	if waiting.Status != model.CallQueued {
		t.Fatalf("call placed while node-b holds the line is %s, want QUEUED", waiting.Status)
	}
	// node-b's call ends there.
	ctx := context.Background()
	err := h.store.Update(ctx, func(tx store.Tx) error {
		c, err := tx.GetCallForUpdate(ctx, elsewhere.OrgID, elsewhere.ID)
		if err != nil {
			return err
		}
		now := model.Now()
		c.Status, c.EndedAt, c.LeaseOwner, c.LeaseExpiresAt = model.CallCompleted, &now, nil, nil
		return tx.UpdateCall(ctx, &c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := h.dialed(); d.Req.CallID != waiting.ID {
		t.Fatalf("dialed %s, want the queued call %s", d.Req.CallID, waiting.ID)
	}
}

// A reservation given up elsewhere frees a line too, and wakes this
// server's dispatcher as a call's end does.
func TestReservationReleasedElsewhereWakesDispatch(t *testing.T) {
	open, ok := engines(t)["postgres"]
	if !ok {
		t.Skip("needs PostgreSQL (PARLEY_TEST_DATABASE_URL): SQLite has one server, whose calls wake its own dispatcher")
	}
	h := newHarness(t, open(t), 2, func(o *Options) { o.Poll = time.Hour })
	ctx := context.Background()
	now := model.Now()
	owner, until := "node-b", now.Add(time.Hour)
	elsewhere := model.Call{ // node-b's caller holds both lines
		ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Outbound,
		Status: model.CallInProgress, FromNumber: "+14155550100", ToNumber: "agent-" + h.agent.ID, ReservesLine: true,
		InitiatedAt: &now, StartedAt: &now, LeaseOwner: &owner, LeaseExpiresAt: &until,
	}
	if err := h.store.Update(ctx, func(tx store.Tx) error { return tx.CreateCall(ctx, &elsewhere) }); err != nil {
		t.Fatal(err)
	}
	waiting := h.mustPlace("+14155550001")
	if waiting.Status != model.CallQueued {
		t.Fatalf("call placed while node-b holds both lines is %s, want QUEUED", waiting.Status)
	}
	err := h.store.Update(ctx, func(tx store.Tx) error {
		ok, err := tx.ReleaseReservedLine(ctx, h.org.ID, elsewhere.ID)
		if err == nil && !ok {
			t.Error("nothing released")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := h.dialed(); d.Req.CallID != waiting.ID {
		t.Fatalf("dialed %s, want the queued call %s", d.Req.CallID, waiting.ID)
	}
}

// A call that ends here, and one canceled, tell LineFreed's listener (the
// campaigns' dispatcher) that a line is free.
func TestLineFreedIsHeard(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			freed := make(chan struct{}, 8)
			h := newHarness(t, open(t), 2, func(o *Options) { o.LineFreed = func() { freed <- struct{}{} } })
			ended := h.mustPlace("+14155550001")
			h.dialed().Answer().RemoteHangup()
			<-freed
			h.waitStatus(ended.ID, model.CallCompleted)
			canceled := h.mustPlace("+14155550002")
			h.dialed()
			if _, err := h.queue.Cancel(context.Background(), h.org.ID, canceled.ID); err != nil {
				t.Fatal(err)
			}
			<-freed
		})
	}
}
