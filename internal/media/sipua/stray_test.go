package sipua

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
)

// farEnd is a carrier's SIP socket driven by hand: it reads what a UA
// sends and answers what the test says.
type farEnd struct {
	t    *testing.T
	conn net.PacketConn
}

func newFarEnd(t *testing.T) *farEnd {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &farEnd{t: t, conn: c}
}

func (f *farEnd) addr() string { return f.conn.LocalAddr().String() }

// next reads messages until one matches, within 10 s, and returns it with
// the address it came from.
func (f *farEnd) next(what string, match func(sip.Message) bool) (sip.Message, net.Addr) {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 65535)
	for {
		_ = f.conn.SetReadDeadline(deadline)
		n, from, err := f.conn.ReadFrom(buf)
		if err != nil {
			f.t.Fatalf("far end: no %s: %v", what, err)
		}
		m, err := sip.ParseMessage(buf[:n])
		if err == nil && match(m) {
			return m, from
		}
	}
}

// request reads the next request of method (others, such as retransmitted
// INVITEs, are skipped).
func (f *farEnd) request(method sip.RequestMethod) (*sip.Request, net.Addr) {
	f.t.Helper()
	m, from := f.next(string(method), func(m sip.Message) bool {
		r, ok := m.(*sip.Request)
		return ok && r.Method == method
	})
	return m.(*sip.Request), from
}

func (f *farEnd) send(to net.Addr, m sip.Message) {
	f.t.Helper()
	if _, err := f.conn.WriteTo([]byte(m.String()), to); err != nil {
		f.t.Fatal(err)
	}
}

// answer sends res to req's top Via (RFC 3261 18.2.2 with rport: its
// source).
func (f *farEnd) answer(req *sip.Request, from net.Addr, code int, reason, toTag string) *sip.Response {
	f.t.Helper()
	res := sip.NewResponseFromRequest(req, code, reason, nil)
	if toTag != "" {
		res.To().Params.Add("tag", toTag)
	}
	f.send(from, res)
	return res
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A server that died while its INVITE rang and restarted on the same
// address cancels the INVITE from the state saved at the 180: the far end
// finds the INVITE's transaction by the CANCEL (same Via branch and
// sent-by, Request-URI, Call-ID, From, To, CSeq number), and the 487 that
// ends it is ACKed by the restarted UA, which never sent the INVITE.
func TestCancelInviteAfterRestart(t *testing.T) {
	far := newFarEnd(t)
	dead, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.Start(context.Background(), func(ctx context.Context, in *Incoming) { _ = in.Reject(404, "Not Found") }); err != nil {
		t.Fatal(err)
	}
	addr := dead.Addr()
	rang := make(chan InviteState, 1)
	dialed := make(chan error, 1)
	go func() {
		_, err := dead.Dial(context.Background(), Target{Host: "127.0.0.1", Port: farPort(far), User: "+15552223333", FromUser: "+15550001111"},
			func(st InviteState) { rang <- st })
		dialed <- err
	}()
	inv, from := far.request(sip.INVITE)
	far.answer(inv, from, 180, "Ringing", "far1")
	st := <-rang
	dead.Close() // as SIGKILL: it sends nothing more
	select {
	case <-dialed:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead UA's dial did not end with it")
	}

	// The same address, once the dead UA's listeners let it go.
	var restarted *UA
	waitFor(t, "the address free again", func() bool {
		ua, err := New(Config{ListenAddr: addr, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		if err := ua.Start(context.Background(), func(ctx context.Context, in *Incoming) { _ = in.Reject(404, "Not Found") }); err != nil {
			ua.Close()
			return false
		}
		restarted = ua
		return true
	})
	t.Cleanup(func() { restarted.Close() })
	canceled := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		canceled <- restarted.CancelInvite(ctx, st, nil)
	}()
	c, from := far.request(sip.CANCEL)
	if c.Recipient.String() != inv.Recipient.String() || c.Via().Value() != inv.Via().Value() ||
		c.CallID().Value() != inv.CallID().Value() || c.From().Value() != inv.From().Value() || c.To().Value() != inv.To().Value() ||
		c.CSeq().SeqNo != inv.CSeq().SeqNo {
		t.Fatalf("the CANCEL does not match its INVITE:\n%s\n%s", c, inv)
	}
	if from.String() != addr {
		t.Errorf("the CANCEL came from %s, want the listener %s", from, addr)
	}
	far.answer(c, from, 200, "OK", "far1")
	far.answer(inv, from, 487, "Request Terminated", "far1")
	if err := <-canceled; err != nil {
		t.Fatalf("CancelInvite: %v", err)
	}
	ack, _ := far.request(sip.ACK)
	if ack.Via().Value() != inv.Via().Value() || ack.Recipient.String() != inv.Recipient.String() || ack.CSeq().SeqNo != inv.CSeq().SeqNo {
		t.Errorf("the 487's ACK is not of the INVITE's transaction:\n%s", ack)
	}
	if tag, _ := ack.To().Params.Get("tag"); tag != "far1" {
		t.Errorf("ACK To %s, want the 487's tag", ack.To().Value())
	}
}

func farPort(f *farEnd) int { _, p := splitHostPort(f.addr()); return p }

// stray2xx is a 2xx to an INVITE sent from ua's address before a restart,
// through a proxy that record-routed at route (both on the far end).
func stray2xx(ua *UA, far *farEnd, callID string, cseq uint32) *sip.Response {
	raw := fmt.Sprintf("SIP/2.0 200 OK\r\n"+
		"Via: SIP/2.0/UDP %s;rport;branch=z9hG4bK-%s\r\n"+
		"Record-Route: <sip:%s;lr;proxy=1>\r\n"+
		"Record-Route: <sip:%s;lr;proxy=2>\r\n"+
		"From: <sip:+15550001111@127.0.0.1>;tag=ours-%s\r\n"+
		"To: <sip:+15552223333@127.0.0.1>;tag=theirs-%s\r\n"+
		"Call-ID: %s\r\nCSeq: %d INVITE\r\n"+
		"Contact: <sip:callee@%s>\r\nContent-Length: 0\r\n\r\n",
		ua.Addr(), callID, far.addr(), far.addr(), callID, callID, callID, cseq, far.addr())
	m, err := sip.ParseMessage([]byte(raw))
	if err != nil {
		panic(err)
	}
	return m.(*sip.Response)
}

func uaAddr(t *testing.T, ua *UA) net.Addr {
	t.Helper()
	a, err := net.ResolveUDPAddr("udp", ua.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A 2xx no transaction waits for (the far end answered a leg after the
// server that rang it died) is answered with ACK, to the Contact through
// the Record-Route reversed, then BYE with the next CSeq; a retransmission
// gets its ACK again but no second BYE.
func TestStray2xxGetsAckThenBye(t *testing.T) {
	ua := newTestUA(t, nil)
	far := newFarEnd(t)
	to := uaAddr(t, ua)

	ok := stray2xx(ua, far, "late-1", 7)
	far.send(to, ok)
	ack, _ := far.request(sip.ACK)
	bye, from := far.request(sip.BYE)
	for _, r := range []*sip.Request{ack, bye} {
		if r.Recipient.String() != "sip:callee@"+far.addr() || r.CallID().Value() != "late-1" {
			t.Errorf("%s to %s, Call-ID %s", r.Method, r.Recipient.String(), r.CallID().Value())
		}
		if ft, _ := r.From().Params.Get("tag"); ft != "ours-late-1" {
			t.Errorf("%s From %s", r.Method, r.From().Value())
		}
		if tt, _ := r.To().Params.Get("tag"); tt != "theirs-late-1" {
			t.Errorf("%s To %s", r.Method, r.To().Value())
		}
		routes := r.GetHeaders("Route")
		if len(routes) != 2 || !strings.Contains(routes[0].Value(), "proxy=2") || !strings.Contains(routes[1].Value(), "proxy=1") {
			t.Errorf("%s routes %v, want the Record-Route reversed", r.Method, routes)
		}
		if b, _ := r.Via().Params.Get("branch"); b == "z9hG4bK-late-1" {
			t.Errorf("%s reuses the INVITE's branch", r.Method)
		}
	}
	if ack.CSeq().SeqNo != 7 || ack.CSeq().MethodName != sip.ACK || bye.CSeq().SeqNo != 8 || bye.CSeq().MethodName != sip.BYE {
		t.Errorf("CSeq %s then %s, want 7 ACK then 8 BYE", ack.CSeq().Value(), bye.CSeq().Value())
	}
	far.answer(bye, from, 200, "OK", "")
	waitFor(t, "the BYE counted answered", func() bool { h, _, _ := ua.StrayAnswers(); return h == 1 })

	// The 2xx again (our ACK was lost): ACK again, no second BYE. Then
	// another call's, which is hung up in turn.
	far.send(to, ok)
	if again, _ := far.request(sip.ACK); again.CallID().Value() != "late-1" {
		t.Fatalf("ACK of %s, want late-1's", again.CallID().Value())
	}
	far.send(to, stray2xx(ua, far, "late-2", 3))
	for {
		r, from := far.request(sip.BYE)
		if r.CallID().Value() == "late-1" {
			t.Fatal("a second BYE for the same stray 2xx")
		}
		far.answer(r, from, 200, "OK", "")
		break
	}
	waitFor(t, "the second BYE counted", func() bool { h, _, _ := ua.StrayAnswers(); return h == 2 })
	if _, failed, ignored := ua.StrayAnswers(); failed != 0 || ignored != 0 {
		t.Errorf("failed %d, ignored %d", failed, ignored)
	}
}

// A stray 2xx is left alone when its Call-ID is a live leg of this UA (a
// late retransmission must not end the call), and when its Via does not
// name this UA's address (it answers no INVITE of ours).
func TestStray2xxOfALiveLegOrAnotherAddressIsIgnored(t *testing.T) {
	ua := newTestUA(t, nil)
	legs := make(chan *Leg, 1)
	callee := newTestUA(t, answerAll(t, legs))
	out, err := ua.Dial(context.Background(), target(callee, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	<-legs
	far := newFarEnd(t)
	to := uaAddr(t, ua)

	far.send(to, stray2xx(ua, far, out.CallID(), 1))
	waitFor(t, "the live leg's 2xx ignored", func() bool { _, _, i := ua.StrayAnswers(); return i == 1 })
	elsewhere := stray2xx(ua, far, "elsewhere-1", 1)
	elsewhere.Via().Port++
	far.send(to, elsewhere)
	waitFor(t, "the 2xx of another address ignored", func() bool { _, _, i := ua.StrayAnswers(); return i == 2 })
	select {
	case <-out.Done():
		t.Fatalf("the live leg ended: %+v", out.End())
	default:
	}
	if h, f, _ := ua.StrayAnswers(); h != 0 || f != 0 {
		t.Errorf("hung up %d, failed %d: nothing was to be", h, f)
	}
	_ = out.Hangup(context.Background())
}

// An INVITE whose 2xx reached this UA first (and was answered with ACK and
// BYE) is not canceled after: CancelInvite returns at once, without a
// CANCEL to wait on (the far end here answers none).
func TestCancelInviteAfterItsStray2xx(t *testing.T) {
	ua := newTestUA(t, nil)
	far := newFarEnd(t)
	ok := stray2xx(ua, far, "late-3", 4)
	far.send(uaAddr(t, ua), ok)
	far.request(sip.ACK)
	bye, from := far.request(sip.BYE)
	far.answer(bye, from, 200, "OK", "")

	st := InviteState{
		RequestURI: "sip:+15552223333@" + far.addr(), Via: ok.Via().Value(), From: ok.From().Value(),
		To: "<sip:+15552223333@127.0.0.1>", CallID: "late-3", CSeq: 4, Transport: "UDP", Destination: far.addr(),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ua.CancelInvite(ctx, st, nil); err != nil {
		t.Fatalf("CancelInvite of an INVITE already hung up: %v, want nil at once", err)
	}
}

// A 200 that crosses our own CANCEL (the dial was abandoned as the callee
// answered) ends the dial; its retransmissions, which no transaction
// takes any more, are answered with ACK and BYE, so the callee is not left
// talking to nobody.
func TestAnswerCrossingOurCancelIsHungUp(t *testing.T) {
	ua := newTestUA(t, nil)
	far := newFarEnd(t)
	ctx, cancel := context.WithCancel(context.Background())
	dialed := make(chan error, 1)
	go func() {
		_, err := ua.Dial(ctx, Target{Host: "127.0.0.1", Port: farPort(far), User: "+15552223333", FromUser: "+15550001111"},
			func(InviteState) { cancel() })
		dialed <- err
	}()
	inv, from := far.request(sip.INVITE)
	far.answer(inv, from, 180, "Ringing", "far2")
	c, from := far.request(sip.CANCEL)
	far.answer(c, from, 200, "OK", "far2")
	ok := sip.NewResponseFromRequest(inv, 200, "OK", nil)
	ok.To().Params.Add("tag", "far2")
	ok.AppendHeader(&sip.ContactHeader{Address: sip.Uri{Scheme: "sip", User: "callee", Host: "127.0.0.1", Port: farPort(far)}})
	far.send(from, ok)
	select {
	case err := <-dialed:
		if err == nil {
			t.Fatal("the abandoned dial returned a leg")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the abandoned dial did not end")
	}
	far.send(from, ok) // retransmitted: nothing of the dial is left to take it
	ack, _ := far.request(sip.ACK)
	bye, byeFrom := far.request(sip.BYE)
	if ack.CallID().Value() != inv.CallID().Value() || bye.CallID().Value() != inv.CallID().Value() || bye.CSeq().SeqNo != inv.CSeq().SeqNo+1 {
		t.Errorf("ACK %s / BYE %s, CSeq %s, want the INVITE's Call-ID %s", ack.CallID().Value(), bye.CallID().Value(), bye.CSeq().Value(), inv.CallID().Value())
	}
	far.answer(bye, byeFrom, 200, "OK", "")
	waitFor(t, "the BYE counted", func() bool { h, _, _ := ua.StrayAnswers(); return h == 1 })
}
