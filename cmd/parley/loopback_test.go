package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// api is a client of a running server.
type api struct {
	t    testing.TB
	base string
	key  string
}

func (a api) do(method, path, body string, want int) map[string]any {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.base+path, strings.NewReader(body))
	req.Header.Set("x-api-key", a.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if d, ok := out["data"].(map[string]any); ok {
		return d
	}
	return out
}

// The whole telephone through the front door: a loopback trunk, two agents,
// a number; POST /calls rings the other agent over real SIP and RTP (G.722);
// both records go live, the API ends the call, and the recording (16 kHz)
// downloads with the key and through its signed link.
func TestLoopbackCallThroughTheAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "31000-31100")
	key, addr := srv.key, srv.addr
	a := api{t: t, base: "http://" + addr + "/v1", key: key}

	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	callee := a.do("POST", "/agents", `{"name":"Callee","promptTemplate":"Answer."}`, 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Caller","promptTemplate":"Ask.","sipTrunkId":%q}`, trunk["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230000","agentId":%q}`, callee["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230000"}`, caller["id"]), 201)
	id := out["id"].(string)

	var inbound map[string]any
	deadline := time.Now().Add(15 * time.Second)
	for inbound == nil || a.do("GET", "/calls/"+id, "", 200)["status"] != "IN_PROGRESS" {
		if time.Now().After(deadline) {
			t.Fatalf("the loopback call did not connect: %v", a.do("GET", "/calls/"+id, "", 200))
		}
		time.Sleep(50 * time.Millisecond)
		list := a.do("GET", "/calls?direction=INBOUND", "", 200)
		if data, _ := list["data"].([]any); len(data) == 1 && data[0].(map[string]any)["status"] == "IN_PROGRESS" {
			inbound = data[0].(map[string]any)
		}
	}
	if inbound["agentId"] != callee["id"] || inbound["fromNumber"] != "+15550001000" || inbound["toNumber"] != "+15551230000" {
		t.Errorf("inbound record %v", inbound)
	}
	time.Sleep(500 * time.Millisecond) // some audio to record
	ended := a.do("POST", "/calls/"+id+"/cancel", "", 200)
	if ended["status"] != "COMPLETED" || ended["hangupCause"] != "API_ENDED" {
		t.Fatalf("ended %v %v", ended["status"], ended["hangupCause"])
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		in := a.do("GET", "/calls/"+inbound["id"].(string), "", 200)
		if in["status"] == "COMPLETED" && in["hangupCause"] == "USER_ENDED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("callee record %v %v", in["status"], in["hangupCause"])
		}
		time.Sleep(50 * time.Millisecond)
	}

	link, _ := ended["recordingUrl"].(string)
	if !strings.HasPrefix(link, "http://"+addr+"/v1/calls/"+id+"/recording?expires=") {
		t.Fatalf("recordingUrl %q", link)
	}
	for _, tc := range []struct {
		name, url, key string
		want           int
	}{
		{"with the key", a.base + "/calls/" + id + "/recording", key, 200},
		{"signed link", link, "", 200},
		{"tampered link", strings.Replace(link, "signature=", "signature=0", 1), "", 401},
		{"no key, no link", a.base + "/calls/" + id + "/recording", "", 401},
	} {
		req, _ := http.NewRequest("GET", tc.url, nil)
		if tc.key != "" {
			req.Header.Set("x-api-key", tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s", tc.name, resp.StatusCode, body)
			continue
		}
		if tc.want == 200 && (resp.Header.Get("Content-Type") != "audio/wav" || !strings.HasPrefix(string(body), "RIFF") || len(body) < 8000) {
			t.Errorf("%s: %s, %d bytes", tc.name, resp.Header.Get("Content-Type"), len(body))
		}
		// The two agents talked G.722, so the recording is 16 kHz.
		if tc.want == 200 && len(body) >= 28 && binary.LittleEndian.Uint32(body[24:28]) != 16000 {
			t.Errorf("%s: recorded at %d Hz, want 16000 (G.722)", tc.name, binary.LittleEndian.Uint32(body[24:28]))
		}
	}
}

// Both legs of a loopback call run in this server under one Call-ID; each
// frees its own SIP dialog slot. With --sip-max-dialogs 4 (two loopback
// calls at once) fifty calls in a row connect only if none leaks a slot, and
// parley_sip_legs comes back to 0.
func TestLoopbackCallsFreeTheirSIPLegs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30200-30299", "--sip-max-dialogs", "4")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	callee := a.do("POST", "/agents", `{"name":"Callee","promptTemplate":"Answer."}`, 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Caller","promptTemplate":"Ask.","sipTrunkId":%q}`, trunk["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230000","agentId":%q}`, callee["id"]), 201)

	legs := func() string {
		resp, err := http.Get("http://" + srv.addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "parley_sip_legs "); ok {
				return v
			}
		}
		t.Fatalf("no parley_sip_legs in /metrics:\n%s", body)
		return ""
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30 s (parley_sip_legs %s)", what, legs())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	start := time.Now()
	for i := range 50 {
		out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230000"}`, caller["id"]), 201)
		id := out["id"].(string)
		wait(fmt.Sprintf("call %d in progress", i+1), func() bool {
			c := a.do("GET", "/calls/"+id, "", 200)
			if c["status"] == "FAILED" {
				t.Fatalf("call %d failed: %v %v", i+1, c["hangupCause"], c["errorMessage"])
			}
			return c["status"] == "IN_PROGRESS"
		})
		a.do("POST", "/calls/"+id+"/cancel", "", 200)
		wait(fmt.Sprintf("both legs of call %d over", i+1), func() bool { return legs() == "0" })
	}
	t.Logf("50 loopback calls in %v, parley_sip_legs back to 0 after each", time.Since(start).Round(time.Second))
}
