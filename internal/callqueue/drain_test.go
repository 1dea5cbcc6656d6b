package callqueue

import (
	"errors"
	"testing"

	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
)

// A draining queue starts no call, its live ones going on: a freed line
// dispatches nothing here, a call placed here waits queued even with a line
// free (one that cannot wait is refused, nothing stored), and another
// server's queue over the same database takes them, oldest first.
func TestDrainingQueueStartsNoCall(t *testing.T) {
	st := engines(t)["sqlite"](t)
	a := newHarness(t, st, 1)
	live := a.mustPlace("+14155550001")
	line := a.dialed().Answer()
	a.waitStatus(live.ID, model.CallInProgress)
	first := a.mustPlace("+14155550002")
	if first.Status != model.CallQueued {
		t.Fatalf("second call %s, want QUEUED", first.Status)
	}

	a.queue.Drain()
	line.RemoteHangup() // a line frees: a draining server does not fill it
	a.waitStatus(live.ID, model.CallCompleted)
	second := a.mustPlace("+14155550003")
	if second.Status != model.CallQueued {
		t.Errorf("a call placed while draining, a line free: %s, want QUEUED", second.Status)
	}
	if _, err := a.place("+14155550004", true); !errors.Is(err, ErrDraining) {
		t.Errorf("skipQueue while draining: %v, want ErrDraining", err)
	}
	if n := a.countStatus(model.CallQueued); n != 2 {
		t.Errorf("%d calls queued, want 2 (the refused one stores nothing)", n)
	}

	b := &harness{t: t, store: st, org: a.org, agent: a.agent, dialer: &calltest.Dialer{}, posts: newPosts()}
	b.start(func(o *Options) { o.Node = "node-b" })
	for _, want := range []model.Call{first, second} {
		d := b.dialed()
		if d.Req.ToNumber != want.ToNumber {
			t.Fatalf("the other server dialed %s, want %s", d.Req.ToNumber, want.ToNumber)
		}
		d.Answer().RemoteHangup()
		b.waitStatus(want.ID, model.CallCompleted)
	}
	select {
	case d := <-a.dialer.Dialed():
		t.Errorf("the draining server dialed %s", d.Req.ToNumber)
	default:
	}
}
