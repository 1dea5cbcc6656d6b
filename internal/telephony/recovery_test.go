package telephony

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strconv"
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
		var st sipua.DialogState
		if err := json.Unmarshal(d.State, &st); err != nil {
			t.Fatal(err)
		}
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
