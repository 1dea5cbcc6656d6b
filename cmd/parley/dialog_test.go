package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/siptest"
)

// legsToSipp starts sipp answering calls (and waiting for our BYE) and, on
// s, an agent calling out through a trunk to it; it places n calls and
// waits until all are IN_PROGRESS, and returns sipp and the call ids.
func legsToSipp(t *testing.T, s *server, key string, n int) (*siptest.Sipp, []string) {
	t.Helper()
	uas := siptest.UAS(t, "uas_answer_wait_bye", siptest.Options{Calls: n, Keys: map[string]string{"audio": "0"}, Timeout: 3 * time.Minute})
	return uas, callsTo(t, s, key, uas, n, "IN_PROGRESS")
}

// callsTo makes, on s, an agent calling out through a trunk to the sipp
// carrier uas, places n calls and waits until all have status; it returns
// the call ids.
func callsTo(t *testing.T, s *server, key string, uas *siptest.Sipp, n int, status string) []string {
	t.Helper()
	host, portS, _ := strings.Cut(uas.Addr(), ":")
	port, _ := strconv.Atoi(portS)
	trunk := s.must(key, 201, "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "sipp", "host": host, "port": port, "transport": "udp"})["data"].(map[string]any)
	agent := s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Caller", "promptTemplate": "You listen.", "sipTrunkId": trunk["id"]})["data"].(map[string]any)
	var ids []string
	for i := range n {
		c := s.must(key, 201, "POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": fmt.Sprintf("+1415555020%d", i), "fromNumber": "+14155550100"})
		ids = append(ids, c["data"].(map[string]any)["id"].(string))
	}
	eventually(t, fmt.Sprintf("%d calls %s at sipp", n, status), func() bool {
		for _, id := range ids {
			if s.must(key, 200, "GET", "/v1/calls/"+id, nil)["data"].(map[string]any)["status"] != status {
				return false
			}
		}
		return true
	})
	return ids
}

// kill is SIGKILL: the process writes nothing more, sends no BYE.
func (s *server) kill() {
	s.t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		s.t.Fatal(err)
	}
	<-s.eof
	s.cmd.Wait()
}

// byesReceived checks sipp got a BYE on every call and answered it: each
// of its calls ends only on one.
func byesReceived(t *testing.T, uas *siptest.Sipp, n int) {
	t.Helper()
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := uas.Counts(); ok != n {
		t.Errorf("sipp ended %d calls on a BYE, want %d", ok, n)
	}
	if got := strings.Count(uas.Messages(), "\nBYE sip:"); got < n {
		t.Errorf("sipp saw %d BYEs, want %d", got, n)
	}
}

func wantEnded(t *testing.T, s *server, key string, ids []string, cause string) {
	t.Helper()
	for _, id := range ids {
		var c map[string]any
		eventually(t, "call "+id+" ended", func() bool {
			c = s.must(key, 200, "GET", "/v1/calls/"+id, nil)["data"].(map[string]any)
			return c["endedAt"] != nil
		})
		if c["status"] != "FAILED" || c["hangupCause"] != cause {
			t.Errorf("call %s ended %v / %v, want FAILED / %s", id, c["status"], c["hangupCause"], cause)
		}
	}
}

// SIGKILL with 5 calls answered by a carrier (sipp): the restarted server
// sends BYE on each leg, so the carrier stops billing, and ends the calls
// FAILED / SERVER_RESTART.
func TestRestartHangsUpCarrierLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	siptest.RequireSipp(t)
	bin := build(t)
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	// The restart listens where the first run did, as a deployment does:
	// sipp answers a BYE at the address of the call's first INVITE, not at
	// the BYE's Via.
	args := []string{"--dialer", "sip", "--sip-addr", fmt.Sprintf("127.0.0.1:%d", freeSIPPort(t)), "--rtp-ports", "32400-32499"}
	s := startServer(t, bin, env, args...)
	key := s.key
	const n = 5
	uas, ids := legsToSipp(t, s, key, n)
	s.kill()

	s = startServer(t, bin, env, args...)
	byesReceived(t, uas, n)
	wantEnded(t, s, key, ids, "SERVER_RESTART")
	if got := strings.Count(s.logs.String(), "sent BYE on a lost call's leg"); got != n {
		t.Errorf("the server logged %d BYEs answered, want %d:\n%s", got, n, s.logs)
	}
}

// Two servers on one PostgreSQL: the one that survives ends the dead one's
// calls once their leases lapse, BYE on each carrier leg first.
func TestSurvivorHangsUpTheDeadServersLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	url := postgresURL(t)
	siptest.RequireSipp(t)
	dsn := createSchema(t, url, fmt.Sprintf("lostlegs_%d", time.Now().UnixNano()))
	bin := build(t)
	env := []string{"PARLEY_DATABASE_URL=" + dsn, "PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("ab", 32)}
	a := startServer(t, bin, env, "--node-id", "a", "--call-lease", "3s",
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "32200-32299")
	key := a.key
	const n = 5
	uas, ids := legsToSipp(t, a, key, n) // b is not up yet: a runs every call
	b := startServer(t, bin, env, "--node-id", "b", "--call-lease", "3s",
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "32300-32399")
	a.kill()

	byesReceived(t, uas, n)
	wantEnded(t, b, key, ids, "LEASE_EXPIRED")
	// sipp answers at a's address (see TestRestartHangsUpCarrierLegs), so b
	// may not hear the 200s: count the BYEs it sent.
	logs := b.logs.String()
	if got := strings.Count(logs, "sent BYE on a lost call's leg") + strings.Count(logs, "BYE on a lost call's leg failed"); got != n {
		t.Errorf("the surviving server logged %d BYEs, want %d", got, n)
	}
}

// freeSIPPort is a port free for both UDP and TCP on 127.0.0.1.
func freeSIPPort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
		l.Close()
		if err == nil {
			u.Close()
			return p
		}
	}
	t.Fatal("no port free for both UDP and TCP")
	return 0
}
