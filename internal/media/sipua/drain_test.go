package sipua

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sendRequest sends one request from c and returns the first final answer's
// status line and headers.
func sendRequest(t *testing.T, c net.Conn, method, callID, toTag string, extra ...string) string {
	t.Helper()
	to := "<sip:+15551230000@127.0.0.1>"
	if toTag != "" {
		to += ";tag=" + toTag
	}
	msg := fmt.Sprintf("%s sip:+15551230000@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-%s-%s\r\n"+
		"From: <sip:probe@127.0.0.1>;tag=f\r\nTo: %s\r\nCall-ID: %s\r\nCSeq: 1 %s\r\nContact: <sip:probe@%s>\r\nMax-Forwards: 70\r\n%s"+
		"Content-Length: 0\r\n\r\n", method, c.LocalAddr(), callID, method, to, callID, method, c.LocalAddr(), strings.Join(extra, ""))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	for {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%s: no answer: %v", method, err)
		}
		res := string(buf[:n])
		if !strings.Contains(res, "Call-ID: "+callID) || strings.HasPrefix(res, "SIP/2.0 1") {
			continue // provisional, or another request's
		}
		return res
	}
}

// Draining, the UA answers OPTIONS and new INVITEs 503 with Retry-After
// (a proxy probing it marks it down), still lets in-dialog requests and
// its own loopback INVITEs through, and answered OPTIONS 200 before.
func TestDrainRefusesNewWork(t *testing.T) {
	var handled atomic.Int32
	ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(),
		Admission: Admission{Exempt: func(h func(string) string) bool { return h("X-Loopback") == "signed" }}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ua.Start(context.Background(), func(ctx context.Context, in *Incoming) {
		handled.Add(1)
		_ = in.Reject(486, "Busy Here")
	}); err != nil {
		t.Fatal(err)
	}
	defer ua.Close()
	c, err := net.Dial("udp", ua.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	if res := sendRequest(t, c, "OPTIONS", "o1", ""); !strings.HasPrefix(res, "SIP/2.0 200") {
		t.Fatalf("OPTIONS before the drain:\n%s", res)
	}
	if ua.Draining() {
		t.Fatal("draining before Drain")
	}
	ua.Drain()
	for _, method := range []string{"OPTIONS", "INVITE"} {
		res := sendRequest(t, c, method, "d-"+method, "")
		if !strings.HasPrefix(res, "SIP/2.0 503") || !strings.Contains(res, "Retry-After: "+drainRetryAfter) {
			t.Errorf("%s while draining:\n%s", method, res)
		}
	}
	if handled.Load() != 0 {
		t.Errorf("the handler ran %d times for INVITEs refused while draining", handled.Load())
	}
	// Inside a dialog: not refused (this dialog is unknown: 481).
	if res := sendRequest(t, c, "BYE", "in-dialog", "t1"); !strings.HasPrefix(res, "SIP/2.0 481") {
		t.Errorf("BYE in a dialog while draining:\n%s", res)
	}
	// Our own loopback leg: the handler answers it.
	if res := sendRequest(t, c, "INVITE", "loopback", "", "X-Loopback: signed\r\n"); !strings.HasPrefix(res, "SIP/2.0 486") {
		t.Errorf("a loopback INVITE while draining:\n%s", res)
	}
}
