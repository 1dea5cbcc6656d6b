package telephony

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// carrier is a SIP peer that answers every call and hands over its legs.
func carrier(t *testing.T) (*sipua.UA, chan *sipua.Leg) {
	t.Helper()
	legs := make(chan *sipua.Leg, 4)
	ua, err := sipua.New(sipua.Config{ListenAddr: "127.0.0.1:0", MediaTimeout: 10 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	err = ua.Start(context.Background(), func(ctx context.Context, in *sipua.Incoming) {
		leg, err := in.Answer()
		if err != nil {
			return
		}
		legs <- leg
		<-leg.Done()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ua.Close() })
	return ua, legs
}

// savedDialog is call c's saved leg.
func (e *env) savedDialog(c model.Call) (model.CallDialog, error) {
	var d model.CallDialog
	err := e.st.View(e.ctx, func(tx store.Tx) (err error) {
		d, err = tx.GetCallDialog(e.ctx, c.OrgID, c.ID)
		return err
	})
	return d, err
}

// An answered call saves its leg's dialog, inbound and outbound; from it,
// HangUpLost ends the carrier's side; the call's end deletes it. Loopback
// legs save none.
func TestAnsweredLegsSaveTheirDialog(t *testing.T) {
	e := newEnv(t)
	peer, peerLegs := carrier(t)
	for _, dir := range []string{model.Inbound, model.Outbound} {
		var c model.Call
		var far *sipua.Leg
		if dir == model.Outbound {
			a := e.agent(withTrunk(e.trunk(peer.Addr()).ID))
			c = e.place(a, "+15557770000")
			far = <-peerLegs
		} else {
			a := e.agent()
			e.number("+15551239999", &a.ID, nil)
			host, p, _ := net.SplitHostPort(e.ua.Addr())
			port, _ := strconv.Atoi(p)
			var err error
			far, err = peer.Dial(e.ctx, sipua.Target{Host: host, Port: port, User: "+15551239999", FromUser: "+15559870000"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range e.calls() {
				if x.Direction == model.Inbound {
					c = x
				}
			}
		}
		c = e.waitFor(c.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress })
		d, err := e.savedDialog(c)
		if err != nil {
			t.Fatalf("%s: no saved dialog: %v", dir, err)
		}
		leg, err := decodeLeg(d.State)
		if err != nil || leg.Kind != legAnswered {
			t.Fatalf("%s: saved leg %s: %v", dir, d.State, err)
		}
		st := *leg.Dialog
		if st.CallID != far.CallID() || st.Destination != peer.Addr() {
			t.Errorf("%s: saved dialog %+v, want Call-ID %s to %s", dir, st, far.CallID(), peer.Addr())
		}
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		if err := e.phone.HangUpLost(ctx, c, d.State); err != nil {
			t.Errorf("%s: BYE from the saved dialog: %v", dir, err)
		}
		cancel()
		select {
		case <-far.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the carrier's leg is still up", dir)
		}
		// Our side of the leg never heard of that BYE: end the call.
		if _, err := e.q.Cancel(e.ctx, c.OrgID, c.ID); err != nil {
			t.Fatal(err)
		}
		e.waitFinal(c.ID)
		if _, err := e.savedDialog(c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: the ended call's dialog: %v", dir, err)
		}
	}

	// A loopback call: both of its legs are this server's.
	out := e.place(e.loopbackCaller(), "+15551230000")
	e.waitFor(out.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress })
	for _, c := range e.calls() {
		if c.ToNumber != "+15551230000" {
			continue
		}
		c = e.waitFor(c.ID, "IN_PROGRESS", func(c model.Call) bool { return c.Status == model.CallInProgress })
		if _, err := e.savedDialog(c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("loopback %s leg saved a dialog: %v", c.Direction, err)
		}
	}
	// Hung up rather than left to the harness's drain.
	if _, err := e.q.Cancel(e.ctx, out.OrgID, out.ID); err != nil {
		t.Fatal(err)
	}
	e.waitLegs(0)
}

// A call that rings saves its INVITE; from it, HangUpLost cancels the
// carrier's ringing leg (the restarted server's CANCEL: see
// cmd/parley/ringing_test.go); the call's end deletes it. An answered call's
// saved dialog replaced it (TestAnsweredLegsSaveTheirDialog).
func TestRingingLegSavesItsInvite(t *testing.T) {
	e := newEnv(t)
	canceled := make(chan error, 1)
	peer, err := sipua.New(sipua.Config{ListenAddr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	err = peer.Start(context.Background(), func(ctx context.Context, in *sipua.Incoming) {
		if err := in.Ringing(); err != nil {
			canceled <- err
			return
		}
		<-in.Context().Done() // rings until the CANCEL
		canceled <- nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })

	a := e.agent(withTrunk(e.trunk(peer.Addr()).ID))
	c := e.place(a, "+15557770001")
	c = e.waitFor(c.ID, "RINGING", func(c model.Call) bool { return c.Status == model.CallRinging })
	d, err := e.savedDialog(c)
	if err != nil {
		t.Fatalf("no saved leg: %v", err)
	}
	leg, err := decodeLeg(d.State)
	if err != nil || leg.Kind != legRinging {
		t.Fatalf("saved leg %s: %v, want a ringing INVITE", d.State, err)
	}
	if st := leg.Invite; st.CallID == "" || st.CSeq == 0 || st.Destination != peer.Addr() || !strings.Contains(st.Via, "branch=z9hG4bK") {
		t.Fatalf("saved INVITE %+v, to %s", st, peer.Addr())
	}
	ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	defer cancel()
	if err := e.phone.HangUpLost(ctx, c, d.State); err != nil {
		t.Fatalf("CANCEL from the saved INVITE: %v", err)
	}
	select {
	case err := <-canceled:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the carrier's leg still rings")
	}
	// Our own INVITE heard the 487: the call ends, and its saved leg with it.
	if got := e.waitFinal(c.ID); got.Status != model.CallFailed {
		t.Errorf("canceled call ended %s", got.Status)
	}
	if _, err := e.savedDialog(c); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the ended call's saved leg: %v", err)
	}
}

// A saved leg is a ringing INVITE or an answered dialog, never both or
// neither; a bare dialog (saved before ringing legs were) is an answered
// one.
func TestDecodeLeg(t *testing.T) {
	for state, want := range map[string]string{
		`{"kind":"ringing","invite":{"callId":"a"}}`:                 legRinging,
		`{"kind":"answered","dialog":{"callId":"a"}}`:                legAnswered,
		`{"callId":"a","localTag":"x","remoteTag":"y","nextCSeq":2}`: legAnswered,
		`{"kind":"ringing"}`:                                         "",
		`{"kind":"ringing","invite":{},"dialog":{}}`:                 "",
		`{"kind":"answered","invite":{"callId":"a"}}`:                "",
		`{"kind":"hold","invite":{"callId":"a"}}`:                    "",
		`[1]`: "",
	} {
		leg, err := decodeLeg([]byte(state))
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: decoded as %s, want an error", state, leg.Kind)
		case want != "" && (err != nil || leg.Kind != want):
			t.Errorf("%s: %s, %v, want %s", state, leg.Kind, err, want)
		case want == legAnswered && (leg.Dialog == nil || leg.Dialog.CallID != "a"):
			t.Errorf("%s: dialog %+v", state, leg.Dialog)
		}
	}
}

// FuzzDecodeLeg: any saved bytes decode to exactly one kind of leg or an
// error (the requests built from a leg are fuzzed in sipua:
// FuzzInviteState).
func FuzzDecodeLeg(f *testing.F) {
	f.Add([]byte(`{"kind":"ringing","invite":{"requestUri":"sip:+1555@192.0.2.1:5060","via":"SIP/2.0/UDP 127.0.0.1:5060;rport;branch=z9hG4bKabc","from":"<sip:+1444@127.0.0.1>;tag=t1","to":"<sip:+1555@192.0.2.1:5060>","callId":"c1","cseq":1,"transport":"UDP","destination":"192.0.2.1:5060"}}`))
	f.Add([]byte(`{"kind":"answered","dialog":{"callId":"c1","localTag":"a","remoteTag":"b","localUri":"sip:a@h","remoteUri":"sip:b@h","remoteTarget":"sip:b@192.0.2.1","nextCSeq":2,"transport":"udp","destination":"192.0.2.1:5060"}}`))
	f.Add([]byte(`{"callId":"c1","localTag":"a","remoteTag":"b"}`))
	f.Add([]byte(`{"kind":"ringing","invite":{"via":"SIP/2.0/UDP h;branch=z9hG4bKx\r\nX: y"}}`))
	f.Fuzz(func(t *testing.T, state []byte) {
		leg, err := decodeLeg(state)
		if err != nil {
			return
		}
		switch leg.Kind {
		case legRinging:
			if leg.Invite == nil || leg.Dialog != nil {
				t.Fatalf("ringing leg %+v", leg)
			}
		case legAnswered:
			if leg.Dialog == nil || leg.Invite != nil {
				t.Fatalf("answered leg %+v", leg)
			}
		default:
			t.Fatalf("decoded kind %q", leg.Kind)
		}
	})
}
