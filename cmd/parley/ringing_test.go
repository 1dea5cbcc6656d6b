package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/siptest"
)

// ringingServer starts the real binary with the SIP dialer on a SIP address
// it keeps across restarts, as a deployment does (the carrier answers where
// the INVITE came from).
func ringingServer(t *testing.T, rtp string) (start func() *server) {
	t.Helper()
	siptest.RequireSipp(t)
	bin := build(t)
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	args := []string{"--dialer", "sip", "--sip-addr", fmt.Sprintf("127.0.0.1:%d", freeSIPPort(t)), "--rtp-ports", rtp}
	return func() *server { return startServer(t, bin, env, args...) }
}

// SIGKILL with 2 calls ringing at a carrier (sipp): the restarted server
// CANCELs each from the INVITE it saved at the 180, ACKs the carrier's 487,
// and ends the calls FAILED / SERVER_RESTART. Without it the carrier rang
// on until its own timeout.
func TestRestartCancelsRingingCarrierLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	start := ringingServer(t, "32600-32699")
	s := start()
	key := s.key
	const n = 2
	uas := siptest.UAS(t, "uas_ring_forever", siptest.Options{Calls: n, Timeout: 3 * time.Minute})
	ids := callsTo(t, s, key, uas, n, "RINGING")
	s.kill()

	s = start()
	// Each of sipp's calls ends only on a CANCEL, once its 487 is ACKed.
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := uas.Counts(); ok != n {
		t.Errorf("sipp ended %d calls on a CANCEL, want %d", ok, n)
	}
	msgs := uas.Messages()
	if c, a := strings.Count(msgs, "\nCANCEL sip:"), strings.Count(msgs, "\nACK sip:"); c < n || a < n {
		t.Errorf("sipp saw %d CANCELs and %d ACKs, want %d of each:\n%s", c, a, n, msgs)
	}
	wantEnded(t, s, key, ids, "SERVER_RESTART")
	if got := strings.Count(s.logs.String(), "sent CANCEL on a lost call's leg"); got != n {
		t.Errorf("the server logged %d CANCELs answered, want %d:\n%s", got, n, s.logs)
	}
	if got := scrape(t, "http://"+s.addr+"/metrics")[`parley_lost_call_cancels_total{result="answered"}`]; got != n {
		t.Errorf("parley_lost_call_cancels_total{answered} = %v, want %d", got, n)
	}
}

// SIGKILL with 2 calls ringing; the carrier (sipp) answers a moment later,
// while the server is down, and retransmits its 200s: the restarted
// server, which never sent those INVITEs, ACKs each 200 and sends BYE, so
// the carrier does not bill a call nobody is on. (It may CANCEL first, as
// for any ringing leg; the carrier answers that CANCEL 200 and it changes
// nothing.)
func TestRestartHangsUpLateAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	start := ringingServer(t, "32700-32799")
	s := start()
	key := s.key
	const n = 2
	uas := siptest.UAS(t, "uas_answer_late", siptest.Options{Calls: n, Keys: map[string]string{"ring": "2000"}, Timeout: 3 * time.Minute})
	ids := callsTo(t, s, key, uas, n, "RINGING")
	s.kill()
	// The answers went to the dead server; the restart hears their
	// retransmissions.
	eventually(t, "sipp answered every call", func() bool { return uas.SentCount("SIP/2.0 200 OK") >= n })

	s = start()
	// Each of sipp's calls ends only on a BYE after the ACK of its 200.
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := uas.Counts(); ok != n {
		t.Errorf("sipp ended %d calls on a BYE, want %d", ok, n)
	}
	msgs := uas.Messages()
	if a, b := strings.Count(msgs, "\nACK sip:"), strings.Count(msgs, "\nBYE sip:"); a < n || b < n {
		t.Errorf("sipp saw %d ACKs and %d BYEs, want %d of each:\n%s", a, b, n, msgs)
	}
	t.Logf("sipp saw %d CANCELs", strings.Count(msgs, "\nCANCEL sip:"))
	wantEnded(t, s, key, ids, "SERVER_RESTART")
	// The BYEs are answered after sipp has its 200 OK to send back: count
	// them once they are.
	eventually(t, "the stray answers counted", func() bool {
		return scrape(t, "http://"+s.addr+"/metrics")[`parley_sip_stray_answers_total{result="hung_up"}`] == n
	})
}
