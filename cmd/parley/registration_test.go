package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/siptest"
)

// `parley serve` keeps a trunk registered at a real registrar (Kamailio,
// granting 4 s): the state shows on the trunk and in /metrics, a call the
// registrar routes to the registered contact rings the agent on the
// trunk's number, SIGTERM unregisters, and a restart registers again.
func TestServeKeepsTheTrunkRegistered(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	siptest.RequireSipp(t)
	kam := siptest.StartKamailio(t, siptest.KamailioOptions{Password: "reg-s3cret", MaxExpires: 4})
	bin := build(t)
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	args := []string{"--dialer", "sip", "--sip-addr", fmt.Sprintf("127.0.0.1:%d", freeSIPPort(t)), "--rtp-ports", "32500-32599"}
	s := startServer(t, bin, env, args...)
	key := s.key

	host, portS, _ := strings.Cut(kam.Addr(), ":")
	port, _ := strconv.Atoi(portS)
	trunk := s.must(key, 201, "POST", "/v1/sip-trunks", map[string]any{
		"friendlyName": "provider", "host": host, "port": port, "transport": "udp",
		"registration": map[string]any{"username": "alice", "password": "reg-s3cret", "expiresSeconds": 600},
	})["data"].(map[string]any)
	path := "/v1/sip-trunks/" + trunk["id"].(string)
	agent := s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Front desk", "promptTemplate": "You answer."})["data"].(map[string]any)
	s.must(key, 201, "POST", "/v1/phone-numbers", map[string]any{"e164": "+14155550177", "sipTrunkId": trunk["id"], "agentId": agent["id"]})

	registered := func(s *server) map[string]any {
		t.Helper()
		var reg map[string]any
		eventually(t, "the trunk registered", func() bool {
			reg = s.must(key, 200, "GET", path, nil)["data"].(map[string]any)["registration"].(map[string]any)
			return reg["state"] == "registered"
		})
		if reg["expiresAt"] == nil || reg["lastError"] != nil || reg["contactUser"] != "alice" {
			t.Fatalf("registration = %v", reg)
		}
		return reg
	}
	first := registered(s)
	eventually(t, "a refresh", func() bool {
		reg := s.must(key, 200, "GET", path, nil)["data"].(map[string]any)["registration"].(map[string]any)
		return reg["state"] == "registered" && reg["expiresAt"] != first["expiresAt"]
	})
	if got := scrape(t, "http://"+s.addr+"/metrics")[`parley_sip_registrations{state="registered"}`]; got != 1 {
		t.Fatalf(`parley_sip_registrations{state="registered"} = %v, want 1`, got)
	}

	uac := siptest.UAC(t, "uac_call", kam.Addr(), siptest.Options{Service: "alice", Keys: map[string]string{"hold": "500"}})
	if err := uac.Wait(); err != nil {
		t.Fatalf("call through the registrar: %v\n%s", err, kam.Output())
	}
	var in map[string]any
	for _, c := range s.calls(key) {
		in = c
	}
	if in == nil || in["direction"] != "INBOUND" || in["toNumber"] != "+14155550177" || in["sipTrunkId"] != trunk["id"] || in["agentId"] != agent["id"] {
		t.Fatalf("the call through the registrar was recorded as %v", in)
	}

	// SIGTERM: the server unregisters before it stops.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.eof
	s.cmd.Wait()
	// Kamailio logs the REGISTER it answered in its own time: wait for it.
	for deadline := time.Now().Add(30 * time.Second); strings.Count(kam.Output(), "expires 0") != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the registrar saw %d un-REGISTERs at shutdown, want 1:\n%s\nserver:\n%s",
				strings.Count(kam.Output(), "expires 0"), kam.Output(), s.logs)
		}
	}

	// Restarted, it registers again.
	s = startServer(t, bin, env, args...)
	registered(s)
}
