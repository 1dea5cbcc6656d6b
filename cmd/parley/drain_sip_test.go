package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/siptest"
	"github.com/parley-voice/parley/internal/store/postgres"
)

// sipAnswer sends one request outside any dialog over UDP to addr and
// returns the final answer.
func sipAnswer(t *testing.T, addr, method string) string {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := fmt.Sprintf("drain-%s-%d", method, time.Now().UnixNano())
	msg := fmt.Sprintf("%s sip:+14155550199@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK-%s\r\n"+
		"From: <sip:+14155550100@%s>;tag=probe\r\nTo: <sip:+14155550199@%s>\r\nCall-ID: %s\r\nCSeq: 1 %s\r\n"+
		"Contact: <sip:probe@%s>\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n",
		method, addr, c.LocalAddr(), id, c.LocalAddr(), addr, id, method, c.LocalAddr())
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	for {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%s to %s: no answer: %v", method, addr, err)
		}
		if res := string(buf[:n]); !strings.HasPrefix(res, "SIP/2.0 1") {
			return res
		}
	}
}

// SIGTERM with a call live at a carrier: from then on the SIP side answers
// OPTIONS and new INVITEs 503 (a proxy's dispatcher marks the server down)
// and the free capacity in /metrics is 0, while /readyz says draining and
// the live call goes on until the drain ends it, with a BYE to the
// carrier; then the server exits cleanly.
func TestDrainRefusesNewSIPCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	siptest.RequireSipp(t)
	bin := build(t)
	sipAddr := fmt.Sprintf("127.0.0.1:%d", freeSIPPort(t))
	s := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", sipAddr, "--rtp-ports", "32600-32699", "--call-drain", "3s", "--sip-max-dialogs", "50")
	capacity := func() (lines, dialogs float64) {
		m := scrape(t, "http://"+s.addr+"/metrics")
		return m[`parley_capacity_free{resource="lines"}`], m[`parley_capacity_free{resource="sip_dialogs"}`]
	}
	if lines, dialogs := capacity(); lines != 50 || dialogs != 50 {
		t.Errorf("free capacity idle: %v lines, %v dialogs; want 50 and 50", lines, dialogs)
	}
	if res := sipAnswer(t, sipAddr, "OPTIONS"); !strings.HasPrefix(res, "SIP/2.0 200") {
		t.Fatalf("OPTIONS before SIGTERM:\n%s", res)
	}
	uas, _ := legsToSipp(t, s, s.key, 1)
	if lines, dialogs := capacity(); lines != 49 || dialogs != 49 {
		t.Errorf("free capacity with a call live: %v lines, %v dialogs; want 49 and 49", lines, dialogs)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "readyz draining", func() bool {
		code, m := s.do("", "GET", "/readyz", nil)
		return code == http.StatusServiceUnavailable && m["status"] == "draining"
	})
	for _, method := range []string{"OPTIONS", "INVITE"} {
		if res := sipAnswer(t, sipAddr, method); !strings.HasPrefix(res, "SIP/2.0 503") || !strings.Contains(res, "Retry-After:") {
			t.Errorf("%s while draining:\n%s", method, res)
		}
	}
	if lines, dialogs := capacity(); lines != 0 || dialogs != 0 {
		t.Errorf("free capacity while draining: %v lines, %v dialogs; want 0 and 0", lines, dialogs)
	}
	if strings.Contains(uas.Messages(), "\nBYE sip:") {
		t.Error("the carrier got a BYE before the drain ended")
	}
	<-s.eof
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, s.logs.String())
	}
	byesReceived(t, uas, 1)
}

// Two servers on one PostgreSQL, one line: a's call is live and b's queue
// holds the next. SIGTERM a: its live call finishes on its own (not hung up
// by the drain, whose bound is far off), a exits once it has, and the
// queued call is taken by b, not a.
func TestDrainHandsQueuedCallsToTheOtherServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	url := postgresURL(t)
	dsn := createSchema(t, url, fmt.Sprintf("drain_%d", time.Now().UnixNano()))
	bin := build(t)
	env := []string{"PARLEY_DATABASE_URL=" + dsn, "PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("ab", 32)}
	// a's calls last 2 s; b's until canceled, so the call it takes stays live to be looked at.
	a := startServer(t, bin, env, "--node-id", "a", "--call-lease", "3s", "--simulate-duration", "2s", "--call-drain", "60s")
	b := startServer(t, bin, env, "--node-id", "b", "--call-lease", "3s")
	key := a.key
	a.must(key, 200, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 1})
	agent := a.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P"})["data"].(map[string]any)
	place := func(s *server, to string) string {
		return s.must(key, 201, "POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": to, "fromNumber": "+14155550100"})["data"].(map[string]any)["id"].(string)
	}
	live := place(a, "+14155550101")
	eventually(t, "a's call in progress", func() bool { return a.calls(key)[live]["status"] == "IN_PROGRESS" })
	queued := place(a, "+14155550102")
	if st := a.calls(key)[queued]["status"]; st != "QUEUED" {
		t.Fatalf("second call %v, want QUEUED", st)
	}

	sent := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-a.eof
	if err := a.cmd.Wait(); err != nil {
		t.Errorf("a's exit: %v\n%s", err, a.logs.String())
	}
	if took := time.Since(sent); took > 30*time.Second {
		t.Errorf("a took %v to exit: it waited for the drain bound, not for its call", took)
	}
	if c := b.calls(key)[live]; c["status"] != "COMPLETED" {
		t.Errorf("a's live call ended %v (%v), want COMPLETED: the drain let it finish", c["status"], c["hangupCause"])
	}
	eventually(t, "the queued call in progress", func() bool { return b.calls(key)[queued]["status"] == "IN_PROGRESS" })
	st, err := postgres.Open(context.Background(), dsn, postgres.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var owner string
	if err := st.DB().QueryRow(`SELECT lease_owner FROM calls WHERE id = $1`, queued).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != "b" {
		t.Errorf("the queued call runs on %q, want b", owner)
	}
}
