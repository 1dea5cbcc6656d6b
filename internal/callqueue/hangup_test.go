package callqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// legDialer's lines save a dialog (the call id), its ringing calls what
// the test rings them with, and it hangs lost legs up by recording them,
// with the call's status at the time of the BYE (or CANCEL).
type legDialer struct {
	*calltest.Dialer
	st   store.Store
	fail bool // every BYE fails (no answer)

	mu     sync.Mutex
	byes   map[string]string // call id -> status when its BYE went out
	states map[string]string // call id -> the state given back
}

type savedLine struct {
	call.Line
	id string
}

func (l savedLine) DialogState() []byte { return []byte(`{"leg":"` + l.id + `"}`) }

func (d *legDialer) Dial(ctx context.Context, req call.DialRequest, ringing func([]byte)) (call.Line, error) {
	l, err := d.Dialer.Dial(ctx, req, ringing)
	if err != nil {
		return nil, err
	}
	return savedLine{Line: l, id: req.CallID}, nil
}

func (d *legDialer) HangUpLost(ctx context.Context, c model.Call, state []byte) error {
	cur, err := store.Read(ctx, d.st, func(tx store.Tx) (model.Call, error) { return tx.GetCall(ctx, c.OrgID, c.ID) })
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.byes[c.ID], d.states[c.ID] = cur.Status, string(state)
	d.mu.Unlock()
	if d.fail {
		return errors.New("no answer")
	}
	return nil
}

func (d *legDialer) bye(id string) (status, state string, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	status, ok = d.byes[id]
	return status, d.states[id], ok
}

func dialog(t *testing.T, st store.Store, c model.Call) (model.CallDialog, error) {
	t.Helper()
	var d model.CallDialog
	err := st.View(context.Background(), func(tx store.Tx) (err error) {
		d, err = tx.GetCallDialog(context.Background(), c.OrgID, c.ID)
		return err
	})
	return d, err
}

// A ringing call's INVITE is saved with RINGING, replaced by the dialog
// at the answer, and deleted with the end; after a crash the restarted
// server cancels the saved ringing leg and sends BYE on the saved answered
// one before it ends the call FAILED / SERVER_RESTART, and another server
// does the same once the lease lapsed (LEASE_EXPIRED). A failed BYE ends it
// all the same.
func TestLostLegsAreHungUp(t *testing.T) {
	for engine, open := range engines(t) {
		t.Run(engine, func(t *testing.T) {
			for _, failing := range []bool{false, true} {
				st := open(t)
				d := &legDialer{Dialer: &calltest.Dialer{}, st: st, fail: failing, byes: map[string]string{}, states: map[string]string{}}
				withDialer := func(o *Options) { o.Dialer = d }
				h := newHarness(t, st, 3, withDialer)
				h.dialer = d.Dialer // the calls it dials

				// A call that ends normally leaves no dialog behind.
				done := h.mustPlace("+14155550001")
				dc := h.dialed()
				dc.RingWith([]byte(`{"invite":"` + done.ID + `"}`))
				h.waitStatus(done.ID, model.CallRinging)
				if got, err := dialog(t, st, done); err != nil || string(got.State) != `{"invite":"`+done.ID+`"}` {
					t.Fatalf("saved ringing leg %q, %v", got.State, err)
				}
				l := dc.Answer()
				h.waitStatus(done.ID, model.CallInProgress)
				if got, err := dialog(t, st, done); err != nil || string(got.State) != `{"leg":"`+done.ID+`"}` {
					t.Fatalf("saved dialog %q, %v", got.State, err)
				}
				l.RemoteHangup()
				h.waitStatus(done.ID, model.CallCompleted)
				if _, err := dialog(t, st, done); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("dialog of an ended call: %v", err)
				}

				// Nor one that rang and was not answered.
				busy := h.mustPlace("+14155550004")
				bc := h.dialed()
				bc.RingWith([]byte(`{"invite":"` + busy.ID + `"}`))
				h.waitStatus(busy.ID, model.CallRinging)
				bc.Fail(&call.DialError{Cause: call.CauseBusy, Message: "486"})
				h.waitStatus(busy.ID, model.CallFailed)
				if _, err := dialog(t, st, busy); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("dialog of a call that rang and ended: %v", err)
				}

				ours := h.mustPlace("+14155550002")
				h.dialed().Answer()
				h.waitStatus(ours.ID, model.CallInProgress)
				dialing := h.mustPlace("+14155550003") // dialed, never rang: no leg to hang up
				h.dialed()
				ringing := h.mustPlace("+14155550005")
				h.dialed().RingWith([]byte(`{"invite":"` + ringing.ID + `"}`))
				h.waitStatus(ringing.ID, model.CallRinging)
				h.crash()

				// Another server's answered call and ringing call, their
				// leases run out.
				theirs := h.insertLive("node-b", -time.Minute)
				theirsRinging := h.insertLiveAs("node-b", -time.Minute, model.CallRinging)
				for c, state := range map[string]string{theirs.ID: `{"leg":"b"}`, theirsRinging.ID: `{"invite":"b"}`} {
					if err := st.Update(context.Background(), func(tx store.Tx) error {
						return tx.PutCallDialog(context.Background(), &model.CallDialog{OrgID: theirs.OrgID, CallID: c, State: []byte(state)})
					}); err != nil {
						t.Fatal(err)
					}
				}

				h.start(withDialer)
				for _, w := range []struct {
					c            model.Call
					cause, state string
					status       string
				}{
					{ours, call.CauseServerRestart, `{"leg":"` + ours.ID + `"}`, model.CallInProgress},
					{ringing, call.CauseServerRestart, `{"invite":"` + ringing.ID + `"}`, model.CallRinging},
					{theirs, call.CauseLeaseExpired, `{"leg":"b"}`, model.CallInProgress},
					{theirsRinging, call.CauseLeaseExpired, `{"invite":"b"}`, model.CallRinging},
				} {
					got := h.waitPost(w.c.ID)
					if got.Status != model.CallFailed || *got.HangupCause != w.cause {
						t.Errorf("failing=%v: lost call ended %s %s, want FAILED %s", failing, got.Status, *got.HangupCause, w.cause)
					}
					status, state, ok := d.bye(w.c.ID)
					if !ok || status != w.status || state != w.state {
						t.Errorf("failing=%v: leg ended %v, the call %s then (want %s), with %q (want %q)", failing, ok, status, w.status, state, w.state)
					}
					if _, err := dialog(t, st, w.c); !errors.Is(err, store.ErrNotFound) {
						t.Errorf("dialog of an ended lost call: %v", err)
					}
				}
				if got := h.waitPost(dialing.ID); got.Status != model.CallFailed {
					t.Errorf("dialing call after restart: %s", got.Status)
				}
				if _, _, ok := d.bye(dialing.ID); ok {
					t.Error("a leg ended for a call that never rang")
				}
				h.stop()
			}
		})
	}
}
