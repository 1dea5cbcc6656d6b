package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/store/postgres"
)

// server is a running `parley serve` process.
type server struct {
	t    testing.TB
	cmd  *exec.Cmd
	addr string
	key  string // printed on first start only
	logs *logBuffer
	eof  chan struct{} // closed once stderr is read to its end
}

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s + "\n")
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var keyLine = regexp.MustCompile(`^pk_live_[0-9A-Za-z]{43}$`)

// startServer runs bin serve with args and env, and waits until it serves.
func startServer(t testing.TB, bin string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--dialer", "simulate",
		"--simulate-ring", "0s", "--allow-private-webhooks", "--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, logs: &logBuffer{}, eof: make(chan struct{})}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		defer close(s.eof)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			line := lines.Text()
			s.logs.add(line)
			if keyLine.MatchString(line) {
				s.key = line
			}
			var rec struct{ Msg, Addr string }
			if s.addr == "" && json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
				s.addr = rec.Addr
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start:\n%s", s.logs.String())
	}
	return s
}

// do sends a request with key and decodes the JSON answer.
func (s *server) do(key, method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	code, m, _ := s.doHeader(key, method, path, body)
	return code, m
}

// doHeader is do with the answer's headers.
func (s *server) doHeader(key, method, path string, body any) (int, map[string]any, http.Header) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+s.addr+path, r)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, resp.Header
}

func (s *server) must(key string, want int, method, path string, body any) map[string]any {
	s.t.Helper()
	code, m := s.do(key, method, path, body)
	if code != want {
		s.t.Fatalf("%s %s = %d, want %d: %v", method, path, code, want, m)
	}
	return m
}

// calls returns every call by id.
func (s *server) calls(key string) map[string]map[string]any {
	s.t.Helper()
	out := map[string]map[string]any{}
	for page := 1; ; page++ {
		m := s.must(key, 200, "GET", fmt.Sprintf("/v1/calls?pageSize=100&page=%d", page), nil)
		for _, c := range m["data"].([]any) {
			c := c.(map[string]any)
			out[c["id"].(string)] = c
		}
		if m["hasNextPage"] != true {
			return out
		}
	}
}

// receiver records post-call webhook deliveries.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	calls map[string]map[string]any
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{calls: map[string]map[string]any{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var rec map[string]any
		json.NewDecoder(req.Body).Decode(&rec)
		r.mu.Lock()
		r.calls[rec["id"].(string)] = rec
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) got(id string) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id]
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SIGKILL with calls live and queued: after a restart every call is still
// there, live ones ended FAILED (SERVER_RESTART) with a post-call delivery,
// and queued ones are dispatched.
func TestCrashKeepsEveryCall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	bin := build(t)
	dir := t.TempDir()
	hooks := newReceiver(t)
	env := []string{"PARLEY_DATA_DIR=" + dir, "PARLEY_CALL_DRAIN=200ms"}
	s := startServer(t, bin, env)
	key := s.key
	s.must(key, 200, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 2})
	agent := s.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P", "postCallWebhookUrl": hooks.URL})["data"].(map[string]any)
	var ids []string
	for i := range 5 {
		c := s.must(key, 201, "POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": fmt.Sprintf("+1415555010%d", i), "fromNumber": "+14155550100"})
		ids = append(ids, c["data"].(map[string]any)["id"].(string))
	}
	eventually(t, "2 calls in progress", func() bool {
		n := 0
		for _, c := range s.calls(key) {
			if c["status"] == "IN_PROGRESS" {
				n++
			}
		}
		return n == 2
	})
	before := s.calls(key)
	if err := s.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	s.cmd.Wait()

	s = startServer(t, bin, env)
	if s.key != "" {
		t.Error("a restart printed a new first key")
	}
	eventually(t, "live calls failed and the queue dispatched", func() bool {
		after := s.calls(key)
		failed, live, queued := 0, 0, 0
		for _, c := range after {
			switch c["status"] {
			case "FAILED":
				failed++
			case "IN_PROGRESS", "INITIATED", "RINGING":
				live++
			case "QUEUED":
				queued++
			}
		}
		return len(after) == 5 && failed == 2 && live == 2 && queued == 1
	})
	for id, c := range before {
		if c["status"] != "IN_PROGRESS" {
			continue
		}
		after := s.must(key, 200, "GET", "/v1/calls/"+id, nil)["data"].(map[string]any)
		if after["hangupCause"] != "SERVER_RESTART" || after["errorMessage"] == nil || after["endedAt"] == nil {
			t.Errorf("live call after restart = %v", after)
		}
		eventually(t, "post-call delivery of "+id, func() bool { return hooks.got(id) != nil })
		if rec := hooks.got(id); rec["status"] != "FAILED" || rec["hangupCause"] != "SERVER_RESTART" {
			t.Errorf("post-call payload = %v", rec)
		}
		eventually(t, "post-call status recorded", func() bool {
			return s.must(key, 200, "GET", "/v1/calls/"+id, nil)["data"].(map[string]any)["postCallWebhookStatus"] == "sent"
		})
	}
	// Graceful stop: after --call-drain, live calls are hung up; exit 0.
	s.cmd.Process.Signal(os.Interrupt)
	<-s.eof // read every log line before Wait closes the pipe
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGINT: %v\n%s", err, s.logs.String())
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop:\n%s", s.logs.String())
	}
	if len(ids) != 5 {
		t.Errorf("%d calls placed", len(ids))
	}
}

// Two servers on one PostgreSQL never hold more calls than the
// organization's limit together.
func TestTwoServersShareTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	url := postgresURL(t)
	schema := fmt.Sprintf("twoservers_%d", time.Now().UnixNano())
	dsn := createSchema(t, url, schema)
	bin := build(t)
	env := []string{"PARLEY_DATABASE_URL=" + dsn, "PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("ab", 32)}
	// Calls last until canceled, so every line stays taken until the test frees it.
	a := startServer(t, bin, env, "--node-id", "a", "--call-lease", "3s")
	b := startServer(t, bin, env, "--node-id", "b", "--call-lease", "3s")
	key := a.key + b.key // exactly one of them created the first key
	if !keyLine.MatchString(key) {
		t.Fatalf("first key %q", key)
	}
	const limit = 3
	a.must(key, 200, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": limit})
	agent := a.must(key, 201, "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P"})["data"].(map[string]any)

	// skipQueue: 40 simultaneous requests across both servers admit exactly the limit.
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted int
		refused  int
	)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			code, _ := s.do(key, "POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": fmt.Sprintf("+141555501%02d", i), "fromNumber": "+14155550100", "skipQueue": true})
			mu.Lock()
			defer mu.Unlock()
			switch code {
			case 201:
				admitted++
			case 429:
				refused++
			default:
				t.Errorf("POST /v1/calls = %d", code)
			}
		}()
	}
	wg.Wait()
	if admitted != limit || refused != 40-limit {
		t.Fatalf("admitted %d, refused %d; want %d and %d", admitted, refused, limit, 40-limit)
	}
	live := func() []map[string]any {
		_, m := a.do(key, "GET", "/v1/calls?status=INITIATED,RINGING,IN_PROGRESS&pageSize=100", nil)
		var out []map[string]any
		for _, c := range m["data"].([]any) {
			out = append(out, c.(map[string]any))
		}
		return out
	}
	if n := len(live()); n != limit {
		t.Fatalf("%d live calls, want %d", n, limit)
	}

	// Queued: 15 calls placed across both servers wait; each line freed (by a
	// cancel through either server) is taken by the oldest waiting call,
	// dispatched by whichever server sees it first, never beyond the limit.
	for i := range 15 {
		s := a
		if i%2 == 1 {
			s = b
		}
		c := s.must(key, 201, "POST", "/v1/calls", map[string]any{"agentId": agent["id"], "toNumber": fmt.Sprintf("+141555502%02d", i), "fromNumber": "+14155550100"})
		if st := c["data"].(map[string]any)["status"]; st != "QUEUED" {
			t.Fatalf("call %d placed at the limit is %v", i, st)
		}
	}
	maxLive, freed := 0, 0
	eventually(t, "every call dispatched and ended", func() bool {
		calls := live()
		if len(calls) > maxLive {
			maxLive = len(calls)
		}
		for _, c := range calls {
			if c["status"] == "IN_PROGRESS" {
				s := a
				if freed%2 == 1 {
					s = b
				}
				s.do(key, "POST", "/v1/calls/"+c["id"].(string)+"/cancel", nil)
				freed++
			}
		}
		_, q := b.do(key, "GET", "/v1/calls?status=QUEUED,INITIATED,RINGING,IN_PROGRESS", nil)
		return q["total"] == float64(0)
	})
	_, done := a.do(key, "GET", "/v1/calls?status=COMPLETED", nil)
	if done["total"] != float64(limit+15) {
		t.Errorf("%v calls completed, want %d", done["total"], limit+15)
	}
	if maxLive > limit {
		t.Errorf("%d calls were live at once, limit %d", maxLive, limit)
	}
}

// createSchema makes an empty, migrated schema for the test and returns a
// database URL that selects it; the schema is dropped afterwards.
// postgresURL is PARLEY_TEST_DATABASE_URL, for a test that needs
// PostgreSQL: skipped without it, failed with CI=true.
func postgresURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
		}
		t.Skip("PARLEY_TEST_DATABASE_URL unset: needs PostgreSQL")
	}
	return url
}

func createSchema(t testing.TB, url, schema string) string {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cleanup, err := postgres.Open(context.Background(), url, postgres.WithSchema(schema), postgres.WithoutMigrate())
		if err == nil {
			cleanup.DB().Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
			cleanup.Close()
		}
	})
	st.Close()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
