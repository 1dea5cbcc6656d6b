package callqueue

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// faultLease is short, so that an outage outlasts leases and the
// heartbeat's failures show within a test.
const faultLease = 900 * time.Millisecond

func withLease(d time.Duration) harnessOption { return func(o *Options) { o.LeaseTTL = d } }

// TestStateWritesSurviveFaults: a write at any step of a call's life that
// the database refuses a few times (busy, an I/O error, a full disk) or
// whose answer is lost after it committed lands once the database takes
// it: both calls end as they would have, each webhook is sent once, and
// the queued call behind them is placed. On both engines.
func TestStateWritesSurviveFaults(t *testing.T) {
	steps := []struct{ name, op, to string }{
		{"admission from the queue", "UpdateCall", model.CallInitiated},
		{"ringing", "ChangeCall", model.CallRinging},
		{"answer", "ChangeCall", model.CallInProgress},
		{"end", "ChangeCall", model.CallCompleted},
		{"webhook status", "SetPostCallWebhookStatus", ""},
		{"lease renewal", "RenewLeases", ""},
	}
	faults := []struct {
		name string
		err  error
	}{{"busy", storefault.Busy}, {"I/O error", storefault.IOError}, {"disk full", storefault.DiskFull}}
	var rules []storefault.Rule
	for _, s := range steps {
		for _, f := range faults {
			rules = append(rules, storefault.Rule{Op: s.op, To: s.to, Times: 2, Err: f.err})
		}
	}
	for _, to := range []string{model.CallInProgress, model.CallCompleted} {
		rules = append(rules, storefault.Rule{Op: "ChangeCall", To: to, Times: 1, Err: storefault.Refused, LoseAck: true})
	}
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := storefault.Wrap(open(t))
			h := newHarness(t, fs, 1, withLease(faultLease))
			for _, r := range rules {
				desc := fmt.Sprintf("%s %s: %v (lost answer %v)", r.Op, r.To, r.Err, r.LoseAck)
				before := fs.Fails(r.Op)
				fs.Inject(r)
				first, queued := h.mustPlace("+14155550001"), h.mustPlace("+14155550002")
				for _, c := range []model.Call{first, queued} {
					d := h.dialed()
					if d.Req.CallID != c.ID {
						t.Fatalf("%s: dialed %s, want %s", desc, d.Req.CallID, c.ID)
					}
					d.Ring()
					if r.To == model.CallRinging {
						// Else the answer may come before the ringing write
						// begins, and take its place.
						h.waitStatus(c.ID, model.CallRinging)
					}
					line := d.Answer()
					h.waitStatus(c.ID, model.CallInProgress)
					if r.Op == "RenewLeases" && c.ID == first.ID {
						waitFor(t, desc+": renewals refused", func() bool { return fs.Fails("RenewLeases") >= before+r.Times })
					}
					line.RemoteHangup()
					got := h.waitPost(c.ID)
					if got.Status != model.CallCompleted || deref(got.HangupCause) != call.CauseUserEnded || got.StartedAt == nil {
						t.Fatalf("%s: call ended %s %s, want COMPLETED USER_ENDED", desc, got.Status, deref(got.HangupCause))
					}
				}
				if n := fs.Fails(r.Op) - before; n != r.Times {
					t.Fatalf("%s: the fault struck %d times, want %d", desc, n, r.Times)
				}
				for _, c := range []model.Call{first, queued} {
					if n := h.posts.deliveries(c.ID); n != 1 {
						t.Errorf("%s: webhook of %s sent %d times", desc, c.ID, n)
					}
				}
				fs.Clear()
			}
		})
	}
}

// TestOutageWithCallsLiveAndQueued is the outage of issue 31 in the
// queue: ten calls hold every line (five answered, five ringing) and
// twenty wait when the database refuses every connection for longer than
// a lease. Calls end and are answered meanwhile. Once it is back every
// change lands, no live call is reaped, the queue drains by itself, and
// each of the thirty ends COMPLETED with one webhook. On both engines.
func TestOutageWithCallsLiveAndQueued(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := storefault.Wrap(open(t))
			h := newHarness(t, fs, 10, withLease(faultLease))
			var placed []model.Call
			for i := range 30 {
				placed = append(placed, h.mustPlace(fmt.Sprintf("+1415555%04d", i)))
			}
			var answered, ringing []*calltest.Line
			var ringingCalls []*calltest.Call
			var answeredInOutage []string
			for i := range 10 {
				d := h.dialed()
				d.Ring()
				if i < 5 {
					answered = append(answered, d.Answer())
					h.waitStatus(d.Req.CallID, model.CallInProgress)
				} else {
					ringingCalls = append(ringingCalls, d)
					h.waitStatus(d.Req.CallID, model.CallRinging)
				}
			}
			leaseEnd := time.Now()
			for _, c := range placed[:10] {
				if l := h.get(c.ID).LeaseExpiresAt; l != nil && l.After(leaseEnd) {
					leaseEnd = *l
				}
			}

			fs.Down(storefault.Refused)
			refused := fs.Fails("")
			for _, l := range answered[:3] {
				l.RemoteHangup() // their ends wait for the database
			}
			for _, d := range ringingCalls[:3] {
				ringing = append(ringing, d.Answer()) // so do their answers
				answeredInOutage = append(answeredInOutage, d.Req.CallID)
			}
			// Down past every lease, with the heartbeat refused meanwhile.
			waitFor(t, "the outage to outlast the leases", func() bool {
				return time.Now().After(leaseEnd.Add(faultLease)) && fs.Fails("") > refused+10
			})
			fs.Up()

			// From now on the far ends answer and hang up at once.
			var drive sync.WaitGroup
			stop := make(chan struct{})
			drive.Go(func() {
				for {
					select {
					case d := <-h.dialer.Dialed():
						d.Ring()
						d.Answer().RemoteHangup()
					case <-stop:
						return
					}
				}
			})
			defer func() { close(stop); drive.Wait() }()
			for _, id := range answeredInOutage {
				h.waitStatus(id, model.CallInProgress)
			}
			for _, l := range append(answered[3:], ringing...) {
				l.RemoteHangup()
			}
			for _, d := range ringingCalls[3:] {
				d.Answer().RemoteHangup()
			}
			for _, c := range placed {
				got := h.waitPost(c.ID)
				if got.Status != model.CallCompleted || deref(got.HangupCause) != call.CauseUserEnded {
					t.Errorf("call %s ended %s %s: %s", c.ToNumber, got.Status, deref(got.HangupCause), deref(got.ErrorMessage))
				}
				if n := h.posts.deliveries(c.ID); n != 1 {
					t.Errorf("call %s: webhook sent %d times", c.ToNumber, n)
				}
			}
			waitFor(t, "the workers to finish", func() bool { return h.queue.liveCount() == 0 })
		})
	}
}

// TestAbandonedEndGoesToTheReaper: an end the database refuses past the
// writes' budget is given up; the worker stops and the reaper ends the
// call at once (not a lease later: the lease here outlasts the test),
// which frees the line for the queued call.
func TestAbandonedEndGoesToTheReaper(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := storefault.Wrap(open(t))
			h := newHarness(t, fs, 1, withLease(time.Hour), shortBudget)
			fs.Inject(storefault.Rule{Op: "ChangeCall", To: model.CallCompleted, Err: storefault.DiskFull})
			first, queued := h.mustPlace("+14155550001"), h.mustPlace("+14155550002")
			h.dialed().Answer().RemoteHangup()
			got := h.waitPost(first.ID)
			if got.Status != model.CallFailed || deref(got.HangupCause) != call.CauseLeaseExpired ||
				!strings.Contains(deref(got.ErrorMessage), "could not record") {
				t.Fatalf("the given-up call ended %s %s: %s", got.Status, deref(got.HangupCause), deref(got.ErrorMessage))
			}
			next := h.dialed()
			if next.Req.CallID != queued.ID {
				t.Fatalf("dialed %s, want the queued call", next.Req.CallID)
			}
			next.Fail(busy())
			h.waitPost(queued.ID)
		})
	}
}

// TestNoLeaseWithoutAWorker: once a worker gave a call up, the heartbeat no
// longer renews its lease (the reaper is kept from ending it here), while
// the lease of a call still running goes on being renewed.
func TestNoLeaseWithoutAWorker(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := storefault.Wrap(open(t))
			h := newHarness(t, fs, 2, withLease(faultLease), shortBudget)
			fs.Inject(storefault.Rule{Op: "ChangeCall", To: model.CallCompleted, Err: storefault.DiskFull})
			fs.Inject(storefault.Rule{Op: "ExpiredLiveCalls", Err: storefault.Busy})
			given, running := h.mustPlace("+14155550001"), h.mustPlace("+14155550002")
			lines := map[string]*calltest.Line{}
			for range 2 {
				d := h.dialed()
				lines[d.Req.CallID] = d.Answer()
				h.waitStatus(d.Req.CallID, model.CallInProgress)
			}
			lines[given.ID].RemoteHangup()
			waitFor(t, "the worker to give the call up", func() bool { return h.queue.liveCount() == 1 })
			givenLease, runningLease := *h.get(given.ID).LeaseExpiresAt, *h.get(running.ID).LeaseExpiresAt
			renewals := fs.Calls("RenewLeases")
			waitFor(t, "two heartbeats", func() bool { return fs.Calls("RenewLeases") >= renewals+2 })
			if got := h.get(given.ID); got.Status != model.CallInProgress || !got.LeaseExpiresAt.Equal(givenLease) {
				t.Errorf("the given-up call is %s, lease %v (was %v): renewed without a worker", got.Status, got.LeaseExpiresAt, givenLease)
			}
			if got := h.get(running.ID); !got.LeaseExpiresAt.After(runningLease) {
				t.Errorf("the running call's lease stayed at %v", got.LeaseExpiresAt)
			}
			fs.Clear()
			if got := h.waitPost(given.ID); got.Status != model.CallFailed {
				t.Errorf("the given-up call ended %s", got.Status)
			}
			lines[running.ID].RemoteHangup()
			if got := h.waitPost(running.ID); got.Status != model.CallCompleted {
				t.Errorf("the running call ended %s", got.Status)
			}
		})
	}
}

// shortBudget gives writes up after 300 ms.
func shortBudget(o *Options) {
	o.Writes = &persist.Writer{Store: o.Store, Logger: o.Logger, Budget: 300 * time.Millisecond}
}

// waitFor waits until ok.
func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
