package callqueue

import (
	"context"
	"errors"
	"testing"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// placeReserving places a call of agent that reserves a line for its far end.
func (h *harness) placeReserving(agent model.Agent, number string, skipQueue bool) (model.Call, error) {
	h.t.Helper()
	c := model.Call{
		ID: model.NewID(), OrgID: h.org.ID, AgentID: agent.ID, AgentName: agent.Name, Direction: model.Outbound,
		FromNumber: "+14155550100", ToNumber: number, Variables: map[string]any{}, Prompt: "P",
		Transcript: []map[string]any{}, Metrics: map[string]any{}, ReservesLine: true,
	}
	err := h.queue.Place(context.Background(), &c, skipQueue)
	return c, err
}

// answer admits an inbound call to the harness's agent, from our own call
// callerID when not empty; the returned line is answered at once.
func (h *harness) answer(callerID string) (model.Call, *calltest.Line, error) {
	h.t.Helper()
	c := call.NewInbound(h.agent, nil, "+14155550100", "agent-"+h.agent.ID, &h.agent.ID)
	if callerID != "" {
		c.LoopbackCallerID = &callerID
	}
	d := &calltest.Dialer{Script: func(call.DialRequest) calltest.Script { return calltest.Script{Answer: true} }}
	l, err := d.Dial(context.Background(), call.DialRequest{}, func([]byte) {})
	if err != nil {
		h.t.Fatal(err)
	}
	line := l.(*calltest.Line)
	err = h.queue.Answer(context.Background(), &c, func(context.Context, func(call.Change) bool) (call.Line, error) {
		return line, nil
	}, true)
	return c, line, err
}

func (h *harness) live() int {
	h.t.Helper()
	n, err := store.Read(context.Background(), h.store, func(tx store.Tx) (int, error) {
		return tx.CountLiveCalls(context.Background(), h.org.ID)
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// newSimulatedCaller stores a hidden simulated-caller agent.
func (h *harness) newSimulatedCaller() model.Agent {
	h.t.Helper()
	now := model.Now()
	a := model.Agent{ID: model.NewID(), OrgID: h.org.ID, Name: "Caller", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config: model.AgentConfig{PromptTemplate: "P", InterruptionThresholdMs: 500}, SimulatedCaller: true, CreatedAt: now, UpdatedAt: now}
	if err := h.store.Update(context.Background(), func(tx store.Tx) error { return tx.CreateAgent(context.Background(), &a) }); err != nil {
		h.t.Fatal(err)
	}
	return a
}

// A call that reserves a line is admitted only when two lines are free,
// keeps the queue's order, and its far end's inbound leg takes the line
// it reserved: nothing else can, and the count never passes the limit.
func TestReservedLine(t *testing.T) {
	for engine, open := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			h := newHarness(t, open(t), 2)
			sim := h.newSimulatedCaller()
			first := h.mustPlace("+14155550001")
			firstDial := h.dialed()
			r, err := h.placeReserving(sim, "agent-"+h.agent.ID, false)
			if err != nil || r.Status != model.CallQueued {
				t.Fatalf("reserving call with one line free: %s, %v; want QUEUED", r.Status, err)
			}
			if _, err := h.placeReserving(sim, "agent-"+h.agent.ID, true); !errors.Is(err, ErrConcurrencyLimit) {
				t.Fatalf("skipQueue reserving call with one line free: %v, want ErrConcurrencyLimit", err)
			}
			// A line is free, but the reserving call ahead does not fit: the
			// calls behind it wait too.
			behind := h.mustPlace("+14155550002")
			h.queue.dispatch(context.Background())
			for _, c := range []model.Call{r, behind} {
				if got := h.get(c.ID); got.Status != model.CallQueued {
					t.Fatalf("call %s is %s with one line free, want QUEUED", c.ID, got.Status)
				}
			}
			if n := h.live(); n != 1 {
				t.Fatalf("live %d, want 1", n)
			}

			firstDial.Answer().RemoteHangup()
			h.waitStatus(first.ID, model.CallCompleted)
			d := h.dialed()
			if d.Req.CallID != r.ID || !d.Req.Loopback {
				t.Fatalf("dialed %+v, want the reserving call over the loopback trunk", d.Req)
			}
			if n := h.live(); n != 2 {
				t.Fatalf("live %d with the reserving call admitted, want 2", n)
			}
			h.queue.dispatch(context.Background())
			if got := h.get(behind.ID); got.Status != model.CallQueued {
				t.Fatalf("the call behind took the reserved line: %s", got.Status)
			}
			// The reserved line is the far end's alone.
			if _, err := h.place("+14155550003", true); !errors.Is(err, ErrConcurrencyLimit) {
				t.Fatalf("skipQueue call onto the reserved line: %v, want ErrConcurrencyLimit", err)
			}
			stranger, _, err := h.answer("")
			if !errors.Is(err, ErrConcurrencyLimit) || stranger.Status != model.CallFailed {
				t.Fatalf("inbound call onto the reserved line: %s, %v; want FAILED BUSY", stranger.Status, err)
			}
			forged, _, err := h.answer(first.ID) // a caller that reserved nothing
			if !errors.Is(err, ErrConcurrencyLimit) || forged.Status != model.CallFailed {
				t.Fatalf("inbound call of a caller without a reservation: %s, %v; want FAILED BUSY", forged.Status, err)
			}

			in, inLine, err := h.answer(r.ID)
			if err != nil || in.Status != model.CallInitiated {
				t.Fatalf("the far end's inbound leg: %s, %v; want INITIATED", in.Status, err)
			}
			if n := h.live(); n != 2 {
				t.Fatalf("live %d with both legs up, want 2", n)
			}
			if h.get(r.ID).ReservesLine {
				t.Fatal("the caller still reserves a line once its far end took it")
			}
			again, _, err := h.answer(r.ID) // the reservation is used up
			if !errors.Is(err, ErrConcurrencyLimit) || again.Status != model.CallFailed {
				t.Fatalf("second inbound leg of the same caller: %s, %v; want FAILED BUSY", again.Status, err)
			}
			got, err := store.Read(context.Background(), h.store, func(tx store.Tx) (model.Call, error) {
				return tx.GetCallByLoopbackCaller(context.Background(), h.org.ID, r.ID)
			})
			if err != nil || got.ID != in.ID {
				t.Fatalf("inbound leg of the caller: %s, %v; want %s", got.ID, err, in.ID)
			}

			h.waitStatus(in.ID, model.CallInProgress)
			inLine.RemoteHangup()
			h.waitStatus(in.ID, model.CallCompleted)
			d.Answer().RemoteHangup()
			h.waitStatus(r.ID, model.CallCompleted)
			h.waitStatus(behind.ID, model.CallInitiated)
			h.dialed().Answer().RemoteHangup()
			h.waitStatus(behind.ID, model.CallCompleted)
			if n := h.live(); n != 0 {
				t.Fatalf("live %d once every call ended, want 0", n)
			}
		})
	}
}

// A reserving call that ends before its far end arrives gives both lines
// back; with a limit of 3 it fits beside one live call, not beside two.
func TestReservedLineLimitThree(t *testing.T) {
	for engine, open := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			h := newHarness(t, open(t), 3)
			sim := h.newSimulatedCaller()
			h.mustPlace("+14155550001")
			one := h.dialed()
			r, err := h.placeReserving(sim, "agent-"+h.agent.ID, false)
			if err != nil || r.Status != model.CallInitiated {
				t.Fatalf("reserving call beside one live call: %s, %v; want INITIATED", r.Status, err)
			}
			rd := h.dialed()
			if n := h.live(); n != 3 {
				t.Fatalf("live %d, want 3", n)
			}
			rd.Fail(busy())
			h.waitStatus(r.ID, model.CallFailed)
			if n := h.live(); n != 1 {
				t.Fatalf("live %d once the reserving call failed, want 1", n)
			}

			h.mustPlace("+14155550002")
			two := h.dialed()
			waiting, err := h.placeReserving(sim, "agent-"+h.agent.ID, false)
			if err != nil || waiting.Status != model.CallQueued {
				t.Fatalf("reserving call beside two live calls: %s, %v; want QUEUED", waiting.Status, err)
			}
			behind := h.mustPlace("+14155550003")
			h.queue.dispatch(context.Background())
			if got := h.get(behind.ID); got.Status != model.CallQueued {
				t.Fatalf("the call behind the waiting reserving call is %s, want QUEUED", got.Status)
			}
			one.Answer().RemoteHangup()
			h.waitStatus(waiting.ID, model.CallInitiated)
			h.dialed().Fail(busy())
			h.waitStatus(waiting.ID, model.CallFailed)
			h.waitStatus(behind.ID, model.CallInitiated)
			h.dialed().Answer().RemoteHangup()
			two.Answer().RemoteHangup()
			h.waitStatus(behind.ID, model.CallCompleted)
		})
	}
}
