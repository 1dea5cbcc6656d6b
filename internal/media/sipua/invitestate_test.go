package sipua

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// sentInvite is an INVITE as a UA sent it through two proxies.
const sentInvite = "INVITE sip:+15552223333@carrier.example:5080 SIP/2.0\r\n" +
	"Via: SIP/2.0/UDP 10.0.0.1:5060;rport;branch=z9hG4bK-ring-1\r\n" +
	"Route: <sip:p1.example:5070;lr>\r\n" +
	"Route: <sip:p2.example;lr>\r\n" +
	"Max-Forwards: 70\r\n" +
	"From: \"Acme\" <sip:+15550001111@10.0.0.1>;tag=ours\r\n" +
	"To: <sip:+15552223333@carrier.example:5080>\r\n" +
	"Call-ID: ring-1@10.0.0.1\r\n" +
	"CSeq: 2 INVITE\r\n" +
	"Contact: <sip:parley@10.0.0.1:5060>\r\n" +
	"Content-Length: 0\r\n\r\n"

func parseRequest(t testing.TB, raw string) *sip.Request {
	t.Helper()
	m, err := sip.ParseMessage([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	req, ok := m.(*sip.Request)
	if !ok {
		t.Fatalf("not a request: %s", raw)
	}
	return req
}

// savedInvite is the state of sentInvite as it comes back from the
// database.
func savedInvite(t testing.TB) InviteState {
	t.Helper()
	req := parseRequest(t, sentInvite)
	req.SetTransport("UDP")
	req.SetDestination("192.0.2.9:5070")
	b, err := json.Marshal(inviteState(req))
	if err != nil {
		t.Fatal(err)
	}
	var st InviteState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// onTheWire is req as the far end parses it.
func onTheWire(t testing.TB, req *sip.Request) *sip.Request {
	t.Helper()
	return parseRequest(t, req.String())
}

// The CANCEL of a saved INVITE is what RFC 3261 9.1 asks: the INVITE's
// Request-URI, Call-ID, From and To (tags as they were), CSeq number, Route
// headers, and its top Via alone, sent where the INVITE went.
func TestCancelFromSavedInvite(t *testing.T) {
	st := savedInvite(t)
	req, err := st.cancel()
	if err != nil {
		t.Fatal(err)
	}
	if req.Destination() != "192.0.2.9:5070" || req.Transport() != "UDP" {
		t.Errorf("to %s over %s", req.Destination(), req.Transport())
	}
	inv, c := parseRequest(t, sentInvite), onTheWire(t, req)
	if c.Method != sip.CANCEL || c.Recipient.String() != inv.Recipient.String() {
		t.Errorf("request line %s", c.StartLine())
	}
	if vias := c.GetHeaders("Via"); len(vias) != 1 || vias[0].Value() != inv.Via().Value() {
		t.Errorf("Via %v, want only %s", vias, inv.Via().Value())
	}
	for _, h := range []string{"From", "To", "Call-ID"} {
		if got, want := c.GetHeader(h).Value(), inv.GetHeader(h).Value(); got != want {
			t.Errorf("%s %q, want %q", h, got, want)
		}
	}
	if c.CSeq().SeqNo != 2 || c.CSeq().MethodName != sip.CANCEL {
		t.Errorf("CSeq %s", c.CSeq().Value())
	}
	routes := c.GetHeaders("Route")
	if len(routes) != 2 || routes[0].Value() != "<sip:p1.example:5070;lr>" || routes[1].Value() != "<sip:p2.example;lr>" {
		t.Errorf("routes %v", routes)
	}
	if c.To().Params.Has("tag") {
		t.Errorf("To %s: the INVITE's had no tag", c.To().Value())
	}
}

// The ACK of the 487 that ends a canceled INVITE belongs to the INVITE's
// transaction (RFC 3261 17.1.1.3): its Request-URI, top Via and routes,
// the CSeq number, and the To of the answer, with the far end's tag.
func TestAckOfTheCanceledInvitesAnswer(t *testing.T) {
	st := savedInvite(t)
	inv := parseRequest(t, sentInvite)
	res := sip.NewResponseFromRequest(inv, 487, "Request Terminated", nil)
	res.To().Params.Add("tag", "theirs")
	req, err := st.ackFinal(res)
	if err != nil {
		t.Fatal(err)
	}
	a := onTheWire(t, req)
	if a.Method != sip.ACK || a.Recipient.String() != inv.Recipient.String() || a.Via().Value() != inv.Via().Value() {
		t.Errorf("ACK %s via %s", a.StartLine(), a.Via().Value())
	}
	if tag, _ := a.To().Params.Get("tag"); tag != "theirs" {
		t.Errorf("To %s, want the answer's tag", a.To().Value())
	}
	if a.CSeq().SeqNo != 2 || a.CSeq().MethodName != sip.ACK || len(a.GetHeaders("Route")) != 2 {
		t.Errorf("CSeq %s, routes %v", a.CSeq().Value(), a.GetHeaders("Route"))
	}
}

// A saved INVITE that cannot make a well-formed CANCEL is refused, and
// nothing it holds can add a line to the request.
func TestCancelRefusesBrokenState(t *testing.T) {
	for name, mod := range map[string]func(*InviteState){
		"no branch":             func(st *InviteState) { st.Via = "SIP/2.0/UDP 10.0.0.1:5060" },
		"two Vias":              func(st *InviteState) { st.Via += ", SIP/2.0/UDP 10.0.0.2;branch=z9hG4bKx" },
		"Via with a line":       func(st *InviteState) { st.Via += "\r\nX-Evil: 1" },
		"From without tag":      func(st *InviteState) { st.From = "<sip:a@h>" },
		"Call-ID with a line":   func(st *InviteState) { st.CallID = "a\r\nX-Evil: 1" },
		"no Call-ID":            func(st *InviteState) { st.CallID = "" },
		"no CSeq":               func(st *InviteState) { st.CSeq = 0 },
		"Request-URI with CRLF": func(st *InviteState) { st.RequestURI = "sip:a@h\r\nX-Evil: 1" },
		"bad Request-URI":       func(st *InviteState) { st.RequestURI = "not a uri" },
		"no destination":        func(st *InviteState) { st.Destination = "" },
		"bad transport":         func(st *InviteState) { st.Transport = "sctp" },
		"bad route":             func(st *InviteState) { st.Routes = []string{"<sip:p1;lr>\r\nX-Evil: 1"} },
	} {
		st := savedInvite(t)
		mod(&st)
		if req, err := st.cancel(); err == nil {
			t.Errorf("%s: built %s", name, req)
		}
	}
}

// FuzzInviteState: whatever a saved INVITE holds, its CANCEL and ACK are
// refused or well formed: one Via, the saved Call-ID and CSeq, and nothing
// more than the state says.
func FuzzInviteState(f *testing.F) {
	b, _ := json.Marshal(savedInvite(f))
	f.Add(b)
	f.Add([]byte(`{"requestUri":"sip:a@h","via":"SIP/2.0/TCP h:1;branch=z9hG4bKq","from":"<sip:b@h>;tag=1","to":"<sip:a@h>","callId":"x","cseq":1,"transport":"tcp","destination":"h:1"}`))
	f.Add([]byte(`{"requestUri":"sip:a@h","via":"SIP/2.0/UDP h;branch=z9hG4bKq, SIP/2.0/UDP i;branch=z9hG4bKr","from":"<sip:b@h>;tag=1","to":"<sip:a@h>","callId":"x","cseq":1,"transport":"udp","destination":"h:1","routes":["<sip:r;lr>, <sip:s;lr>"]}`))
	f.Fuzz(func(t *testing.T, state []byte) {
		var st InviteState
		if json.Unmarshal(state, &st) != nil {
			return
		}
		res := sip.NewResponse(487, "Request Terminated")
		res.AppendHeader(&sip.ToHeader{Address: sip.Uri{Scheme: "sip", User: "a", Host: "h"}, Params: sip.HeaderParams{{K: "tag", V: "t"}}})
		build := map[sip.RequestMethod]func() (*sip.Request, error){
			sip.CANCEL: st.cancel,
			sip.ACK:    func() (*sip.Request, error) { return st.ackFinal(res) },
		}
		for method, build := range build {
			req, err := build()
			if err != nil {
				continue
			}
			m, err := sip.ParseMessage([]byte(req.String()))
			if err != nil {
				t.Fatalf("%s from %q does not parse: %v\n%s", method, state, err, req)
			}
			got, ok := m.(*sip.Request)
			if !ok || got.Method != method || len(got.GetHeaders("Via")) != 1 ||
				got.CallID() == nil || got.CallID().Value() != st.CallID ||
				got.CSeq() == nil || got.CSeq().SeqNo != st.CSeq || got.CSeq().MethodName != method ||
				len(got.GetHeaders("Route")) != len(st.Routes) || strings.Count(req.String(), "\r\n") != len(req.Headers())+2 {
				t.Fatalf("%s from %q:\n%s", method, state, req)
			}
		}
	})
}
