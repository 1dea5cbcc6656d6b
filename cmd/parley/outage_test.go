package main

import (
	"encoding/json"
	"fmt"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
)

// The database going away under a running server (issue 31): calls live
// and queued when PostgreSQL refuses every connection, and its backends
// are killed (mid-transaction, too), for a while. Meanwhile the API
// answers 503 with Retry-After, never 500, and /healthz 503; afterwards
// every state change lands, the queue drains by itself, and every call
// ends COMPLETED with its post-call webhook sent once. TestDatabaseOutage
// holds the outage 10 s; with PARLEY_SOAK=1 (make soak)
// TestDatabaseOutageMinute holds it 60 s, past the calls' 30 s leases.
func TestDatabaseOutage(t *testing.T) { pgOutage(t, 10*time.Second) }

func TestDatabaseOutageMinute(t *testing.T) {
	if os.Getenv("PARLEY_SOAK") == "" {
		t.Skip("a minute-long outage: make soak (PARLEY_SOAK=1)")
	}
	pgOutage(t, time.Minute)
}

// On SQLite the embedded database cannot go away, but it can refuse
// writes: another process holds its write lock past the server's 10 s
// busy timeout, so every write of the call plane fails SQLITE_BUSY. Reads
// go on (WAL); writes answer 503.
func TestDatabaseBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	bin := build(t)
	dir := t.TempDir()
	o := startOutage(t, bin, []string{"PARLEY_DATA_DIR=" + dir})
	unlock := sqlitetest.LockWrites(t, filepath.Join(dir, "parley.db"))
	// A create waits the busy timeout out, then is refused.
	o.refused(t, "POST", "/v1/calls", map[string]any{"agentId": o.agent, "toNumber": "+14155550999", "fromNumber": "+14155550100"})
	if code, _ := o.s.do(o.key, "GET", "/v1/calls?pageSize=1", nil); code != 200 {
		t.Errorf("GET /v1/calls while writes are refused = %d, want 200 (reads go on)", code)
	}
	// Held until the call plane's own writes have been refused.
	deadline := time.Now().Add(2 * time.Minute)
	for scrape(t, "http://"+o.s.addr+"/metrics")[`parley_store_write_retries_total{write="call state"}`] < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no call state write was refused while the lock was held")
		}
		time.Sleep(100 * time.Millisecond)
	}
	unlock()
	o.settles(t)
}

func pgOutage(t *testing.T, d time.Duration) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	url := postgresURL(t)
	t.Parallel()
	db := pgtest.NewDatabase(t, url)
	bin := build(t)
	o := startOutage(t, bin, []string{"PARLEY_DATABASE_URL=" + db.URL, "PARLEY_DATA_DIR=" + t.TempDir(), "PARLEY_SECRET_KEY=" + strings.Repeat("ab", 32)})

	db.Refuse(t) // connections refused, and the open ones killed, mid-transaction too
	start := time.Now()
	probed := false
	for time.Since(start) < d {
		db.Terminate(t)
		if !probed {
			o.refused(t, "GET", "/v1/calls", nil)
			o.refused(t, "POST", "/v1/calls", map[string]any{"agentId": o.agent, "toNumber": "+14155550999", "fromNumber": "+14155550100"})
			if code, _ := o.s.do("", "GET", "/healthz", nil); code != 503 {
				t.Errorf("/healthz during the outage = %d, want 503", code)
			}
			probed = true
		}
		time.Sleep(time.Second)
	}
	db.Accept(t)
	o.settles(t)
}

// outage is a server with 30 calls placed at the default limit of 10, each
// ringing a second and lasting three, whose webhooks a receiver counts.
type outage struct {
	s      *server
	key    string
	agent  string
	calls  []string
	hooks  *countingReceiver
	before time.Time
}

func startOutage(t *testing.T, bin string, env []string) *outage {
	t.Helper()
	hooks := newCountingReceiver(t)
	s := startServer(t, bin, env, "--simulate-ring", "1s", "--simulate-duration", "3s")
	o := &outage{s: s, key: s.key, hooks: hooks, before: time.Now()}
	o.agent = s.must(o.key, 201, "POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P", "postCallWebhookUrl": hooks.URL})["data"].(map[string]any)["id"].(string)
	for i := range 30 {
		c := s.must(o.key, 201, "POST", "/v1/calls", map[string]any{"agentId": o.agent, "toNumber": fmt.Sprintf("+141555501%02d", i), "fromNumber": "+14155550100"})
		o.calls = append(o.calls, c["data"].(map[string]any)["id"].(string))
	}
	eventually(t, "ten calls holding the lines, some answered", func() bool {
		live, answered := 0, 0
		for _, c := range s.calls(o.key) {
			switch c["status"] {
			case "INITIATED", "RINGING":
				live++
			case "IN_PROGRESS":
				live++
				answered++
			}
		}
		return live == 10 && answered > 0
	})
	t.Logf("lines taken at %v", time.Since(o.before).Round(time.Millisecond))
	return o
}

// refused checks a request is answered 503 unavailable with Retry-After.
func (o *outage) refused(t *testing.T, method, path string, body any) {
	t.Helper()
	code, m, h := o.s.doHeader(o.key, method, path, body)
	e, _ := m["error"].(map[string]any)
	if code != 503 || e["code"] != "unavailable" || h.Get("Retry-After") == "" {
		t.Errorf("%s %s during the outage = %d %v (Retry-After %q), want 503 unavailable", method, path, code, m, h.Get("Retry-After"))
	}
}

// settles waits for every call to end COMPLETED, with one webhook each,
// and no call left on a line.
func (o *outage) settles(t *testing.T) {
	t.Helper()
	t.Logf("outage over at %v; settling", time.Since(o.before).Round(time.Millisecond))
	defer func() { t.Logf("settled at %v", time.Since(o.before).Round(time.Millisecond)) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		calls := o.s.calls(o.key)
		done := 0
		for _, id := range o.calls {
			if calls[id]["status"] == "COMPLETED" && calls[id]["postCallWebhookStatus"] == "sent" {
				done++
			}
		}
		if done == len(o.calls) {
			break
		}
		if time.Now().After(deadline) {
			by := map[any]int{}
			for _, id := range o.calls {
				by[calls[id]["status"]]++
			}
			t.Fatalf("after the outage: %d of %d calls COMPLETED with their webhook; by status %v\n%s", done, len(o.calls), by, o.s.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, id := range o.calls {
		if n := o.hooks.count(id); n != 1 {
			t.Errorf("call %s: post-call webhook sent %d times", id, n)
		}
	}
	m := scrape(t, "http://"+o.s.addr+"/metrics")
	if live := m["parley_calls_live"]; live != 0 {
		t.Errorf("parley_calls_live %v after the outage", live)
	}
	if retried := m[`parley_store_write_retries_total{write="call state"}`]; retried == 0 {
		t.Errorf("no call state write was retried: the outage missed the call plane")
	}
}

// countingReceiver counts post-call deliveries by call id.
type countingReceiver struct {
	*httptest.Server
	mu sync.Mutex
	n  map[string]int
}

func newCountingReceiver(t testing.TB) *countingReceiver {
	r := &countingReceiver{n: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var rec struct{ ID string }
		if err := json.NewDecoder(req.Body).Decode(&rec); err == nil {
			r.mu.Lock()
			r.n[rec.ID]++
			r.mu.Unlock()
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *countingReceiver) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}
