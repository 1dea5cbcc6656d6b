package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/objecttest"
)

// Two servers on one PostgreSQL and one object store (versitygw): a call
// runs on a; the store is down when it ends, so a keeps the recording on
// its disk and serves it while b cannot; once the store is back the
// recording is uploaded, and b serves it, whole and by ranges, with the API
// key and through the call's signed recordingUrl.
func TestRecordingsInTheObjectStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	url := postgresURL(t)
	store := objecttest.Start(t)
	dsn := createSchema(t, url, fmt.Sprintf("recordings_%d", time.Now().UnixNano()))
	bin := build(t)
	began := time.Now()
	defer func() { t.Logf("servers and call: %v", time.Since(began).Round(time.Millisecond)) }()
	env := append(store.Env(), "PARLEY_DATABASE_URL="+dsn, "PARLEY_SECRET_KEY="+strings.Repeat("cd", 32),
		"PARLEY_RECORDINGS_URL="+store.URL("parley"))
	dirA := t.TempDir()
	a := startServer(t, bin, append(env, "PARLEY_DATA_DIR="+dirA), "--node-id", "a",
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "31200-31300")
	b := startServer(t, bin, append(env, "PARLEY_DATA_DIR="+t.TempDir()), "--node-id", "b")
	key := a.key + b.key // one of them created the first key
	if !keyLine.MatchString(key) {
		t.Fatalf("first key %q", key)
	}

	trunk := a.must(key, 201, "POST", "/v1/sip-trunks", map[string]any{"friendlyName": "Loopback", "transport": "loopback"})["data"].(map[string]any)
	callee := a.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Callee", "promptTemplate": "Answer."})["data"].(map[string]any)
	caller := a.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "Caller", "promptTemplate": "Ask.", "sipTrunkId": trunk["id"]})["data"].(map[string]any)
	a.must(key, 201, "POST", "/v1/phone-numbers", map[string]any{"e164": "+15551230000", "agentId": callee["id"]})
	id := a.must(key, 201, "POST", "/v1/calls", map[string]any{"agentId": caller["id"], "fromNumber": "+15550001000", "toNumber": "+15551230000"})["data"].(map[string]any)["id"].(string)
	status := func(s *server, id string) string {
		_, m := s.do(key, "GET", "/v1/calls/"+id, nil)
		d, _ := m["data"].(map[string]any)
		st, _ := d["status"].(string)
		return st
	}
	eventually(t, "the loopback call connects", func() bool { return status(a, id) == "IN_PROGRESS" })
	local := filepath.Join(dirA, "recordings")
	// Both legs' recordings, each with some audio on disk (8,000 bytes: a
	// quarter second of 8 kHz stereo), so the download below has a body.
	eventually(t, "the recordings fill on a's disk", func() bool {
		m := files(t, local)
		for _, f := range m {
			if st, err := os.Stat(f); err != nil || st.Size() < 8000 {
				return false
			}
		}
		return len(m) == 2
	})

	store.Stop()
	ended := a.must(key, 200, "POST", "/v1/calls/"+id+"/cancel", nil)["data"].(map[string]any)
	link, _ := ended["recordingUrl"].(string)
	if !strings.HasPrefix(link, "http://"+a.addr+"/v1/calls/"+id+"/recording?expires=") {
		t.Fatalf("recordingUrl %q", link)
	}
	eventually(t, "a tries the store", func() bool {
		return scrape(t, "http://"+a.addr+"/metrics")["parley_recording_upload_failures_total"] >= 1
	})
	if n := len(files(t, local)); n != 2 {
		t.Fatalf("%d recordings on a's disk while the store is down, want both legs'", n)
	}
	full := get(t, "http://"+a.addr+"/v1/calls/"+id+"/recording", key, "", 200)
	if !bytes.HasPrefix(full, []byte("RIFF")) || len(full) < 8000 {
		t.Fatalf("a's recording: %d bytes", len(full))
	}
	get(t, "http://"+b.addr+"/v1/calls/"+id+"/recording", key, "", 0) // not 200: b cannot reach it yet

	store.Restart()
	eventually(t, "the upload once the store is back", func() bool { return len(files(t, local)) == 0 })
	if got := store.Objects("parley/"); len(got) != 2 {
		t.Fatalf("objects %q, want both legs' recordings", got)
	}
	for name, s := range map[string]*server{"a": a, "b": b} {
		if got := get(t, "http://"+s.addr+"/v1/calls/"+id+"/recording", key, "", 200); !bytes.Equal(got, full) {
			t.Errorf("%s serves %d bytes, want the %d recorded", name, len(got), len(full))
		}
		if got := get(t, "http://"+s.addr+"/v1/calls/"+id+"/recording", key, "bytes=100-4195", 206); !bytes.Equal(got, full[100:4196]) {
			t.Errorf("%s: a range: %d bytes", name, len(got))
		}
		signed := strings.Replace(link, a.addr, s.addr, 1) // behind a load balancer, either server answers the link
		if got := get(t, signed, "", "bytes=-44", 206); !bytes.Equal(got, full[len(full)-44:]) {
			t.Errorf("%s: the signed link's last bytes: %d", name, len(got))
		}
	}
	if n := scrape(t, "http://"+a.addr+"/metrics")["parley_recording_uploads_total"]; n != 2 {
		t.Errorf("a's uploads_total %v, want 2", n)
	}
}

// get fetches url with key (or none) and Range (or none), and checks the
// status (0: anything but 200).
func get(t *testing.T, url, key, rng string, want int) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if want == 0 && resp.StatusCode == 200 || want != 0 && resp.StatusCode != want {
		t.Fatalf("GET %s (Range %q) = %d %.200s, want %d", url, rng, resp.StatusCode, body, want)
	}
	return body
}

// files lists the recordings under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*", "*.wav"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
