package callqueue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// 50 simultaneous requests against a limit of 5 admit exactly 5, on every engine.
func TestAdmissionIsExactUnderConcurrency(t *testing.T) {
	for engine, open := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			for _, skip := range []bool{true, false} {
				t.Run(fmt.Sprintf("skipQueue=%v", skip), func(t *testing.T) {
					h := newHarness(t, open(t), 5)
					var (
						wg       sync.WaitGroup
						mu       sync.Mutex
						rejected int
					)
					for i := range 50 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							_, err := h.place(fmt.Sprintf("+1415555%04d", i), skip)
							if errors.Is(err, ErrConcurrencyLimit) {
								mu.Lock()
								rejected++
								mu.Unlock()
							} else if err != nil {
								t.Error(err)
							}
						}()
					}
					wg.Wait()
					live := h.countStatus(model.CallInitiated) + h.countStatus(model.CallRinging) + h.countStatus(model.CallInProgress)
					queued := h.countStatus(model.CallQueued)
					if skip {
						if live != 5 || rejected != 45 || queued != 0 {
							// Say what became of the missing calls (a store error
							// under load once ended one FAILED, freeing its line).
							t.Fatalf("skipQueue: live %d rejected %d queued %d, want 5 45 0; others: %v",
								live, rejected, queued, h.describeFinal())
						}
					} else if live != 5 || queued != 45 || rejected != 0 {
						t.Fatalf("queued: live %d queued %d rejected %d, want 5 45 0", live, queued, rejected)
					}
				})
			}
		})
	}
}

func TestRejectedCallStoresNothing(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 1)
	h.mustPlace("+14155550001")
	if _, err := h.place("+14155550002", true); !errors.Is(err, ErrConcurrencyLimit) {
		t.Fatalf("second skipQueue call: %v", err)
	}
	all := 0
	for _, s := range []string{model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress, model.CallFailed, model.CallCanceled} {
		all += h.countStatus(s)
	}
	if all != 1 {
		t.Errorf("%d calls stored, want 1", all)
	}
}

// Queued calls are dispatched oldest first as lines free up.
func TestFIFODispatch(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 1)
	first := h.mustPlace("+14155550000")
	if first.Status != model.CallInitiated {
		t.Fatalf("first call %s, want INITIATED", first.Status)
	}
	var queued []model.Call
	for i := 1; i <= 4; i++ {
		c := h.mustPlace(fmt.Sprintf("+1415555000%d", i))
		if c.Status != model.CallQueued {
			t.Fatalf("call %d is %s, want QUEUED", i, c.Status)
		}
		queued = append(queued, c)
	}
	// With a line free and calls waiting, a new call queues behind them.
	var order []string
	d := h.dialed()
	order = append(order, d.Req.ToNumber)
	for range queued {
		d.Answer().RemoteHangup()
		d = h.dialed()
		order = append(order, d.Req.ToNumber)
	}
	d.Answer().RemoteHangup()
	want := []string{"+14155550000", "+14155550001", "+14155550002", "+14155550003", "+14155550004"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("dial order %v, want %v", order, want)
	}
	for _, c := range queued {
		got := h.waitStatus(c.ID, model.CallCompleted)
		if got.InitiatedAt == nil || got.InitiatedAt.Before(got.CreatedAt) {
			t.Errorf("initiatedAt %v before createdAt %v", got.InitiatedAt, got.CreatedAt)
		}
	}
}

// Every final status and cause the call plane produces, recorded with its
// times and its post-call delivery.
func TestFinalStatusesAndCauses(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 10)
	h.dialer.Script = func(req call.DialRequest) calltest.Script {
		switch req.ToNumber {
		case "+10000000001":
			return calltest.Script{Fail: busy()}
		case "+10000000002":
			return calltest.Script{Fail: &call.DialError{Cause: call.CauseNoAnswer, Message: "no answer within 60s"}}
		case "+10000000003":
			return calltest.Script{Fail: &call.DialError{Cause: call.CauseSIPError, Message: "503 Service Unavailable"}}
		case "+10000000004":
			return calltest.Script{Answer: true, HangupAfterAnswer: true}
		}
		return calltest.Script{}
	}
	cases := []struct {
		number, status, cause, message string
		answered                       bool
	}{
		{"+10000000001", model.CallFailed, call.CauseBusy, "486 Busy Here", false},
		{"+10000000002", model.CallFailed, call.CauseNoAnswer, "no answer within 60s", false},
		{"+10000000003", model.CallFailed, call.CauseSIPError, "503 Service Unavailable", false},
		{"+10000000004", model.CallCompleted, call.CauseUserEnded, "", true},
	}
	for _, c := range cases {
		placed := h.mustPlace(c.number)
		got := h.waitPost(placed.ID)
		if got.Status != c.status || *got.HangupCause != c.cause || (c.message != "" && (got.ErrorMessage == nil || *got.ErrorMessage != c.message)) {
			t.Errorf("%s: %s %v %v, want %s %s %q", c.number, got.Status, deref(got.HangupCause), deref(got.ErrorMessage), c.status, c.cause, c.message)
		}
		if got.EndedAt == nil || got.InitiatedAt == nil || (got.StartedAt != nil) != c.answered || (got.DurationSeconds != nil) != c.answered {
			t.Errorf("%s: times initiated %v started %v ended %v duration %v", c.number, got.InitiatedAt, got.StartedAt, got.EndedAt, got.DurationSeconds)
		}
		if got.LeaseOwner != nil || *got.PostCallWebhookStatus != model.WebhookSent {
			t.Errorf("%s: lease %v post-call %v", c.number, got.LeaseOwner, *got.PostCallWebhookStatus)
		}
	}
	// Transferred and failed mid-call, ended by the far side's line.
	h.dialer.Script = nil
	for _, r := range []call.Result{
		{Status: model.CallTransferred, HangupCause: call.CauseTransferred},
		{Status: model.CallFailed, HangupCause: call.CauseSIPError, ErrorMessage: "RTP timeout"},
		{Status: model.CallCompleted, HangupCause: call.CauseEndCallTool},
	} {
		placed := h.mustPlace("+10000000009")
		d := h.dialed()
		d.Ring()
		h.waitStatus(placed.ID, model.CallRinging)
		line := d.Answer()
		h.waitStatus(placed.ID, model.CallInProgress)
		line.End(r)
		got := h.waitPost(placed.ID)
		if got.Status != r.Status || *got.HangupCause != r.HangupCause {
			t.Errorf("line ended %v: recorded %s %s", r, got.Status, *got.HangupCause)
		}
	}
}

func TestCancel(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 1)
	ringing := h.mustPlace("+14155550001")
	queued := h.mustPlace("+14155550002")
	d := h.dialed()
	d.Ring()
	h.waitStatus(ringing.ID, model.CallRinging)

	// A queued call is canceled at once and never dialed.
	c, err := h.queue.Cancel(t.Context(), h.org.ID, queued.ID)
	if err != nil || c.Status != model.CallCanceled || *c.HangupCause != call.CauseAPIEnded {
		t.Fatalf("cancel queued: %v %+v", err, c)
	}
	// A ringing call is abandoned.
	c, err = h.queue.Cancel(t.Context(), h.org.ID, ringing.ID)
	if err != nil || c.Status != model.CallCanceled || c.StartedAt != nil || c.DurationSeconds != nil {
		t.Fatalf("cancel ringing: %v %+v", err, c)
	}
	// A live call is hung up: COMPLETED, API_ENDED.
	live := h.mustPlace("+14155550003")
	line := h.dialed().Answer()
	h.waitStatus(live.ID, model.CallInProgress)
	c, err = h.queue.Cancel(t.Context(), h.org.ID, live.ID)
	if err != nil || c.Status != model.CallCompleted || *c.HangupCause != call.CauseAPIEnded || c.DurationSeconds == nil {
		t.Fatalf("cancel live: %v %+v", err, c)
	}
	if cause := <-line.HungUp(); cause != call.CauseAPIEnded {
		t.Errorf("line hung up with %s", cause)
	}
	// A call that is over cannot be canceled; another organization's is not found.
	var conflict *invalid.Conflict
	if _, err := h.queue.Cancel(t.Context(), h.org.ID, live.ID); !errors.As(err, &conflict) {
		t.Errorf("cancel ended call: %v", err)
	}
	for _, id := range []string{queued.ID, ringing.ID, live.ID} {
		h.waitPost(id)
	}
}

// A call whose agent was deleted or disabled while it waited fails without dialing.
func TestAgentGoneWhileQueued(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 1)
	first := h.mustPlace("+14155550001")
	waiting := h.mustPlace("+14155550002")
	d := h.dialed()
	if err := h.store.Update(t.Context(), func(tx store.Tx) error { return tx.DeleteAgent(t.Context(), h.org.ID, h.agent.ID) }); err != nil {
		t.Fatal(err)
	}
	d.Answer().RemoteHangup()
	h.waitStatus(first.ID, model.CallCompleted)
	got := h.waitStatus(waiting.ID, model.CallFailed)
	if *got.HangupCause != call.CauseAgentUnavailable || got.AgentName != "Agent" {
		t.Errorf("waiting call: %s %s", *got.HangupCause, got.AgentName)
	}
	// The agent is gone, so its post-call URL is too: skipped.
	if got := h.waitPost(waiting.ID); *got.PostCallWebhookStatus != model.WebhookSkipped {
		t.Errorf("post-call = %s, want skipped", *got.PostCallWebhookStatus)
	}
	select {
	case extra := <-h.dialer.Dialed():
		t.Errorf("dialed %s for a deleted agent", extra.Req.ToNumber)
	default:
	}
}

// Calls that were live when a server died end FAILED with a cause and get
// their post-call webhook; queued ones stay queued and are dispatched.
func TestRestartRecovery(t *testing.T) {
	for engine, open := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			st := open(t)
			h := newHarness(t, st, 2)
			live := []model.Call{h.mustPlace("+14155550001"), h.mustPlace("+14155550002")}
			queued := h.mustPlace("+14155550003")
			h.dialed()
			answered := h.dialed()
			answered.Answer()
			h.waitStatus(answered.Req.CallID, model.CallInProgress) // workers dial in any order
			// Crash: the queue's goroutines vanish without writing anything.
			h.crash()

			// Another server's lost call: its lease has run out.
			lostElsewhere := h.insertLive("node-b", -time.Minute)
			// Another server's call still leased: left alone.
			alive := h.insertLive("node-b", time.Hour)

			h.start() // the same node comes back
			for _, c := range live {
				got := h.waitPost(c.ID)
				if got.Status != model.CallFailed || *got.HangupCause != call.CauseServerRestart {
					t.Errorf("live call after restart: %s %s", got.Status, *got.HangupCause)
				}
			}
			if got := h.waitPost(lostElsewhere.ID); *got.HangupCause != call.CauseLeaseExpired {
				t.Errorf("lost call of another node: %s", *got.HangupCause)
			}
			if got := h.get(alive.ID); got.Status != model.CallInProgress {
				t.Errorf("a leased call of another node was touched: %s", got.Status)
			}
			d := h.dialed()
			if d.Req.CallID != queued.ID {
				t.Fatalf("dialed %s, want the queued call", d.Req.CallID)
			}
			d.Answer().RemoteHangup()
			h.waitStatus(queued.ID, model.CallCompleted)
		})
	}
}

// On an embedded database every live call found at start is this server's.
func TestReclaimAllOnStart(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 2)
	h.crash()
	c := h.insertLive("renamed-node", time.Hour)
	h.start(func(o *Options) { o.ReclaimAllOnStart = true })
	if got := h.waitPost(c.ID); got.Status != model.CallFailed || *got.HangupCause != call.CauseServerRestart {
		t.Errorf("%s %s", got.Status, *got.HangupCause)
	}
}

// Shutdown lets live calls finish, then hangs up the rest; queued calls stay.
func TestShutdownDrains(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 1)
	live := h.mustPlace("+14155550001")
	queued := h.mustPlace("+14155550002")
	line := h.dialed().Answer()
	h.waitStatus(live.ID, model.CallInProgress)
	h.stop()
	if got := h.get(live.ID); got.Status != model.CallFailed || *got.HangupCause != call.CauseServerShutdown {
		t.Errorf("live call after shutdown: %s %v", got.Status, deref(got.HangupCause))
	}
	if cause := <-line.HungUp(); cause != call.CauseServerShutdown {
		t.Errorf("hung up with %s", cause)
	}
	if got := h.get(queued.ID); got.Status != model.CallQueued {
		t.Errorf("queued call after shutdown: %s", got.Status)
	}
	if got := h.get(live.ID); got.PostCallWebhookStatus == nil {
		t.Error("post-call webhook of the hung-up call not delivered before exit")
	}
}

// Once shutdown has begun no call is admitted (ErrDraining, nothing
// stored): a worker started then would race the wait for the workers.
func TestNoAdmissionWhileDraining(t *testing.T) {
	h := newHarness(t, engines(t)["sqlite"](t), 1, func(o *Options) { o.Drain = time.Hour })
	live := h.mustPlace("+14155550001")
	line := h.dialed().Answer()
	h.waitStatus(live.ID, model.CallInProgress)
	stopped := make(chan struct{})
	go func() {
		h.stop()
		close(stopped)
	}()
	waitFor(t, "the drain to begin", func() bool {
		h.queue.admissions.RLock()
		defer h.queue.admissions.RUnlock()
		return h.queue.closing
	})
	if _, err := h.place("+14155550002", false); !errors.Is(err, ErrDraining) {
		t.Errorf("Place while draining: %v, want ErrDraining", err)
	}
	in := model.Call{ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Inbound,
		FromNumber: "+14155550100", ToNumber: "+14155559999", Variables: map[string]any{}, Prompt: "P",
		Transcript: []map[string]any{}, Metrics: map[string]any{}}
	connect := func(context.Context, func(call.Change) bool) (call.Line, error) {
		t.Error("an inbound call was connected while draining")
		return nil, errors.New("no")
	}
	if err := h.queue.Answer(t.Context(), &in, connect, true); !errors.Is(err, ErrDraining) {
		t.Errorf("Answer while draining: %v, want ErrDraining", err)
	}
	if n := h.countStatus(model.CallQueued) + h.countStatus(model.CallFailed); n != 0 {
		t.Errorf("%d calls stored while draining", n)
	}
	line.RemoteHangup() // the drain ends with the last call
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the queue did not stop once its last call ended")
	}
	if got := h.get(live.ID); got.Status != model.CallCompleted {
		t.Errorf("the live call ended %s", got.Status)
	}
}
