package sipua

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"
)

// newLimitedUA is a started UA with room for max legs.
func newLimitedUA(t *testing.T, max int, h Handler) *UA {
	t.Helper()
	ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MaxDialogs: max})
	if err != nil {
		t.Fatal(err)
	}
	if err := ua.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ua.Close() })
	return ua
}

// waitActive waits until ua has want legs up or being set up.
func waitActive(t *testing.T, ua *UA, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for ua.Active() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d dialog slots taken, want %d", ua.Active(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answerAll answers every call, hands its leg over on legs and holds the
// call until the leg ends. An answer that fails is tb's error, or ignored
// with tb nil (limit and load tests, where a caller may give up first).
func answerAll(tb testing.TB, legs chan<- *Leg) Handler {
	return func(ctx context.Context, in *Incoming) {
		leg, err := in.Answer()
		if err != nil {
			if tb != nil {
				tb.Error(err)
			}
			return
		}
		legs <- leg
		<-leg.Done()
	}
}

// A loopback call's two legs share a Call-ID; each must free its own slot.
// With room for two calls, 50 in a row go through only if none leaks.
func TestLoopbackCallsFreeTheirDialogSlots(t *testing.T) {
	answered := make(chan *Leg, 1)
	ua := newLimitedUA(t, 4, answerAll(nil, answered))
	for i := range 50 {
		out, err := ua.Dial(context.Background(), target(ua, "+15552223333"), nil)
		if err != nil {
			t.Fatalf("call %d: %v (slots taken: %d)", i+1, err, ua.Active())
		}
		in := <-answered
		if in.CallID() != out.CallID() {
			t.Fatalf("loopback legs with Call-IDs %q and %q", in.CallID(), out.CallID())
		}
		// Our BYE and the far end's, in turn.
		hangsUp, other := out, in
		if i%2 == 1 {
			hangsUp, other = in, out
		}
		if err := hangsUp.Hangup(context.Background()); err != nil {
			t.Fatalf("call %d: hangup: %v", i+1, err)
		}
		<-other.Done()
		if !other.End().Remote {
			t.Errorf("call %d: the leg hung up on ended %+v, want remote", i+1, other.End())
		}
		waitActive(t, ua, 0)
	}
}

// SIP INFO digits go to the leg whose dialog they belong to, told apart by
// tags when both legs of a loopback call share the Call-ID.
func TestSIPInfoDigitsReachTheRightLoopbackLeg(t *testing.T) {
	answered := make(chan *Leg, 1)
	ua := newLimitedUA(t, 4, answerAll(nil, answered))
	out, err := ua.Dial(context.Background(), target(ua, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := <-answered
	defer func() { _ = out.Hangup(context.Background()) }()

	info := func(d diago.DialogSession, recipient sip.Uri, signal string) {
		t.Helper()
		req := sip.NewRequest(sip.INFO, recipient)
		req.AppendHeader(sip.NewHeader("Content-Type", "application/dtmf-relay"))
		req.SetBody([]byte("Signal=" + signal + "\r\nDuration=160\r\n"))
		res, err := d.Do(context.Background(), req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("INFO: %v %v", res, err)
		}
	}
	client := out.dialog.(*diago.DialogClientSession)
	server := in.dialog.(*diago.DialogServerSession)
	info(client, client.InviteRequest.Recipient, "4") // caller -> callee
	info(server, server.RemoteContact().Address, "9") // callee -> caller
	for _, tc := range []struct {
		name string
		leg  *Leg
		want rune
	}{{"callee", in, '4'}, {"caller", out, '9'}} {
		select {
		case d := <-tc.leg.Digits():
			if d != tc.want {
				t.Errorf("the %s got digit %q, want %q", tc.name, d, tc.want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("the %s got no digit", tc.name)
		}
	}
	for _, l := range []*Leg{in, out} {
		select {
		case d := <-l.Digits():
			t.Errorf("a leg got a second digit %q (another leg's)", d)
		default:
		}
	}
}

// Every way a call can end without becoming a leg, or end as one, gives
// its dialog slots back.
// dialThenCancel dials and cancels the call once it rings.
func dialThenCancel(t *testing.T, ua *UA) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := ua.Dial(ctx, target(ua, "+15552223333"), func(InviteState) { cancel() })
	return err
}

func wantCanceled(t *testing.T, err error) {
	if !errors.Is(err, context.Canceled) {
		t.Errorf("dial: %v, want canceled", err)
	}
}

func TestDialogSlotsFreedOnEveryPath(t *testing.T) {
	ringForever := func(ctx context.Context, in *Incoming) {
		_ = in.Ringing()
		<-in.Context().Done()
	}
	for _, tc := range []struct {
		name    string
		handler Handler
		dial    func(t *testing.T, ua *UA) error
		check   func(t *testing.T, err error)
	}{{
		name:    "rejected",
		handler: func(ctx context.Context, in *Incoming) { _ = in.Reject(486, "Busy Here") },
		check: func(t *testing.T, err error) {
			var rej *Rejected
			if !errors.As(err, &rej) || rej.Code != 486 {
				t.Errorf("dial: %v, want SIP 486", err)
			}
		},
	}, {
		name:    "not answered by the handler",
		handler: func(ctx context.Context, in *Incoming) {},
		check: func(t *testing.T, err error) {
			var rej *Rejected
			if !errors.As(err, &rej) || rej.Code != 480 {
				t.Errorf("dial: %v, want SIP 480", err)
			}
		},
	}, {
		name:    "canceled while ringing",
		handler: ringForever,
		dial:    dialThenCancel,
		check:   wantCanceled,
	}, {
		name:    "ring timeout",
		handler: ringForever,
		dial: func(t *testing.T, ua *UA) error {
			tg := target(ua, "+15552223333")
			tg.RingTimeout = 300 * time.Millisecond
			_, err := ua.Dial(context.Background(), tg, nil)
			return err
		},
		check: func(t *testing.T, err error) {
			if !errors.Is(err, ErrNoAnswer) {
				t.Errorf("dial: %v, want no answer", err)
			}
		},
	}, {
		name: "answered too late",
		handler: func(ctx context.Context, in *Incoming) {
			_ = in.Ringing()
			<-in.Context().Done()
			if leg, err := in.Answer(); err == nil {
				t.Errorf("a canceled INVITE was answered")
				_ = leg.Hangup(context.Background())
			}
		},
		dial:  dialThenCancel,
		check: wantCanceled,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ua := newLimitedUA(t, 2, tc.handler)
			// Twice: a slot leaked by the first call would refuse the second.
			for range 2 {
				var err error
				if tc.dial != nil {
					err = tc.dial(t, ua)
				} else {
					_, err = ua.Dial(context.Background(), target(ua, "+15552223333"), nil)
				}
				tc.check(t, err)
				waitActive(t, ua, 0)
			}
		})
	}
}

// Close hangs up both legs of a live loopback call and frees their slots.
func TestCloseFreesLiveLegs(t *testing.T) {
	answered := make(chan *Leg, 1)
	ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MaxDialogs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := ua.Start(context.Background(), answerAll(nil, answered)); err != nil {
		t.Fatal(err)
	}
	out, err := ua.Dial(context.Background(), target(ua, "+15552223333"), nil)
	if err != nil {
		ua.Close()
		t.Fatal(err)
	}
	in := <-answered
	if ua.Active() != 2 {
		t.Errorf("%d slots taken by a loopback call, want 2", ua.Active())
	}
	ua.Close()
	<-out.Done()
	<-in.Done()
	if n := ua.Active(); n != 0 {
		t.Errorf("%d slots taken after Close", n)
	}
}
