package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// SIGTERM with a call live: while the call drains (--call-drain), /readyz
// answers 503 draining, the API 503 unavailable with Retry-After, and
// /healthz still 200; then the server stops cleanly.
func TestDrainAnswersReadiness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := build(t)
	// The call lasts until the drain hangs it up: the drain is the window.
	s := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()}, "--call-drain", "3s")
	key := s.key
	if code, m := s.do("", "GET", "/readyz", nil); code != http.StatusOK || m["status"] != "ready" {
		t.Fatalf("readyz before = %d %v", code, m)
	}
	agent := s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P"})["data"].(map[string]any)
	id := s.must(key, 201, "POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": "+14155550101", "fromNumber": "+14155550100"})["data"].(map[string]any)["id"].(string)
	eventually(t, "the call in progress", func() bool { return s.calls(key)[id]["status"] == "IN_PROGRESS" })

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "readyz draining", func() bool {
		code, m := s.do("", "GET", "/readyz", nil)
		return code == http.StatusServiceUnavailable && m["status"] == "draining"
	})
	req, _ := http.NewRequest("GET", "http://"+s.addr+"/v1/agents", nil)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("the API while draining = %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, _ := s.do("", "GET", "/healthz", nil); code != http.StatusOK {
		t.Errorf("healthz while draining = %d", code)
	}

	<-s.eof
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, s.logs.String())
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop:\n%s", s.logs.String())
	}
}
