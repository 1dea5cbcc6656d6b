package sipua

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// saved is st as it comes back from the database.
func saved(t *testing.T, st DialogState) DialogState {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out DialogState
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func waitEnd(t *testing.T, l *Leg) {
	t.Helper()
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the leg did not end")
	}
	if e := l.End(); !e.Remote {
		t.Fatalf("the leg ended from our side (%+v), want the far end's BYE", e)
	}
}

// A UA that never saw the dialog (a restarted process) ends it from the
// saved state, in both roles: the caller's dialog ends the callee's leg and
// the callee's the caller's. A second BYE is answered too.
func TestEndDialogFromSavedState(t *testing.T) {
	for _, role := range []string{"caller", "callee"} {
		t.Run(role, func(t *testing.T) {
			// The caller's UA is made first so that it closes last: the
			// callee's answers its last BYE (diago repeats one after the
			// handler returns).
			caller := newTestUA(t, nil)
			answered := make(chan *Leg, 1)
			callee := newTestUA(t, answerAll(t, answered))
			out, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
			if err != nil {
				t.Fatal(err)
			}
			in := <-answered
			saver, other := out, in
			if role == "callee" {
				saver, other = in, out
			}
			st := saved(t, saver.Dialog())
			if st.CallID != out.CallID() || st.LocalTag == "" || st.RemoteTag == "" || st.Destination == "" || st.NextCSeq == 0 {
				t.Fatalf("incomplete state: %+v", st)
			}
			restarted := newTestUA(t, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := restarted.EndDialog(ctx, st, nil); err != nil {
				t.Fatalf("BYE: %v", err)
			}
			waitEnd(t, other)
			// A repeated BYE (another server's, racing) is answered: 481
			// once the far end forgot the dialog, 200 just before.
			if err := restarted.EndDialog(ctx, st, nil); err != nil && !errors.Is(err, ErrDialogGone) {
				t.Fatalf("second BYE: %v, want an answer", err)
			}
			// The saver's own leg (its process "dead") ends while the far
			// end is still up to answer.
			_ = saver.Hangup(ctx)
		})
	}
}

// The BYE goes to the first route, carries the route set in order, the
// dialog's identity and a CSeq above the saved one.
func TestByeFromSavedState(t *testing.T) {
	st := DialogState{
		CallID: "c1@h", LocalTag: "ours", RemoteTag: "theirs",
		LocalURI: "sip:+15550001111@10.0.0.1", RemoteURI: "sip:+15552223333@carrier.example",
		RemoteTarget: "sip:ua@192.0.2.7:5080",
		RouteSet:     []string{"<sip:p1.example:5070;lr>", "<sip:p2.example;lr>"},
		NextCSeq:     7, Transport: "udp", Destination: "192.0.2.9:5070",
	}
	req, err := st.bye()
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Recipient.String(); got != "sip:ua@192.0.2.7:5080" {
		t.Errorf("Request-URI %s", got)
	}
	routes := req.GetHeaders("Route")
	if len(routes) != 2 || routes[0].Value() != "<sip:p1.example:5070;lr>" || routes[1].Value() != "<sip:p2.example;lr>" {
		t.Errorf("routes %v", routes)
	}
	if f, _ := req.From().Params.Get("tag"); f != "ours" {
		t.Errorf("From tag %q", f)
	}
	if to, _ := req.To().Params.Get("tag"); to != "theirs" {
		t.Errorf("To tag %q", to)
	}
	if req.CallID().Value() != "c1@h" || req.CSeq().SeqNo != 7 || req.CSeq().MethodName != "BYE" {
		t.Errorf("Call-ID %s CSeq %v", req.CallID().Value(), req.CSeq())
	}
	if req.Destination() != "192.0.2.9:5070" || req.Transport() != "UDP" {
		t.Errorf("to %s over %s", req.Destination(), req.Transport())
	}
	st.Destination = ""
	if req, _ = st.bye(); req.Destination() != "p1.example:5070" {
		t.Errorf("without a saved destination: to %s, want the first route", req.Destination())
	}
}
