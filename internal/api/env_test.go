package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	parley "github.com/parley-voice/parley"
	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// env is a running API over a fresh SQLite store with two organizations:
// key belongs to "acme", otherKey to "globex".
type env struct {
	t        testing.TB
	srv      *httptest.Server
	server   *Server
	store    store.Store
	box      *secret.Box
	key      string
	otherKey string
	contract *contract
	dialer   *calltest.Dialer
	posted   chan []byte // post-call bodies delivered
	model    *testModel  // the fake language model, with withModel
}

// postRecorder delivers post-call webhooks into a channel.
type postRecorder chan []byte

func (p postRecorder) PostCall(_ context.Context, _, _ string, body []byte) string {
	p <- body
	return "sent"
}

// envConfig is an env's server configuration and its queue's dialer.
type envConfig struct {
	Config
	dialer *calltest.Dialer
	open   func(testing.TB) store.Store // default: SQLite in a temporary directory
	model  *modelConfig                 // withModel: a fake model behind the test runner and generator
}

type envOption func(*envConfig)

// withDialer makes d the env's dialer: a test sets its Script or drives
// calls through Dialed. By default calls ring until canceled.
func withDialer(d *calltest.Dialer) envOption {
	return func(c *envConfig) { c.dialer = d }
}

func withRateLimit(rate float64, burst int) envOption {
	return func(c *envConfig) { c.RateLimit, c.RateBurst = rate, burst }
}

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	ctx := context.Background()
	cfg := envConfig{open: openSQLite, Config: Config{
		OpenAPI: parley.OpenAPI, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}}
	for _, o := range opts {
		o(&cfg)
	}
	st := cfg.open(t) // closed by the opener's cleanup, after the env's
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	web, recs := cfg.WebCalls, cfg.Recordings // set by withWebCalls, withRecordings
	cfg.Services, cfg.Store = domain.New(st, box, 10), st
	cfg.WebCalls, cfg.Recordings = web, recs
	if cfg.dialer == nil {
		cfg.dialer = &calltest.Dialer{Script: func(call.DialRequest) calltest.Script { return calltest.Script{} }}
	}
	e0 := &env{dialer: cfg.dialer, posted: make(chan []byte, 1024)}
	// Poll is the production default: placed calls and freed lines wake the
	// dispatcher, and no test waits on the fallback (at 10 ms its looking for
	// queued calls cost a tenth of this package's test CPU).
	cfg.Queue = callqueue.New(callqueue.Options{
		Store: st, Dialer: cfg.dialer, Webhooks: postRecorder(e0.posted), Secret: cfg.Orgs.WebhookSecret,
		Node: "test", Poll: time.Second, Drain: 10 * time.Millisecond, Logger: cfg.Logger,
	})
	if cfg.model != nil {
		e0.model = startTestRunner(t, &cfg.Config, cfg.model)
	}
	queueCtx, stopQueue := context.WithCancel(context.Background())
	queueDone := make(chan struct{})
	go func() {
		cfg.Queue.Run(queueCtx)
		close(queueDone)
	}()
	server := New(cfg.Config)
	srv := httptest.NewServer(server)
	e := e0
	e.t, e.srv, e.server, e.store, e.box = t, srv, server, st, box
	if _, bench := t.(*testing.B); !bench {
		e.contract = loadContract(t) // benchmarks measure the server, not the validator
	}
	t.Cleanup(func() {
		srv.Close()
		cfg.Messages.Close()
		stopQueue()
		<-queueDone
	})
	if e.key, _, err = cfg.Orgs.CreateKey(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if e.otherKey, _, err = cfg.Orgs.CreateKey(ctx, "globex"); err != nil {
		t.Fatal(err)
	}
	return e
}

// response is one answer, decoded.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Data is the body's data member as an object.
func (r response) Data(t testing.TB) map[string]any {
	t.Helper()
	d, ok := r.JSON(t)["data"].(map[string]any)
	if !ok {
		t.Fatalf("data is not an object: %s", r.Body)
	}
	return d
}

// List is the body's data member as an array of objects.
func (r response) List(t testing.TB) []map[string]any {
	t.Helper()
	raw, ok := r.JSON(t)["data"].([]any)
	if !ok {
		t.Fatalf("data is not an array: %s", r.Body)
	}
	out := make([]map[string]any, len(raw))
	for i, v := range raw {
		out[i] = v.(map[string]any)
	}
	return out
}

// ErrorCode is the house error code, and ErrorFields the fields it names.
func (r response) ErrorCode(t testing.TB) string {
	t.Helper()
	e, ok := r.JSON(t)["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error member: %s", r.Body)
	}
	return e["code"].(string)
}

func (r response) ErrorFields(t testing.TB) []string {
	t.Helper()
	e := r.JSON(t)["error"].(map[string]any)
	details, _ := e["details"].([]any)
	var out []string
	for _, d := range details {
		out = append(out, d.(map[string]any)["field"].(string))
	}
	return out
}

// request sends one request with key (none when key is ""), checks the
// exchange against the OpenAPI contract, and returns the answer. body may be
// nil, a string (sent as is) or any value (sent as JSON).
func (e *env) request(method, path string, body any, key string) response {
	e.t.Helper()
	return e.requestWith(method, path, body, key, nil)
}

// requestWith is request with extra headers.
func (e *env) requestWith(method, path string, body any, key string, header http.Header) response {
	e.t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.contract != nil {
		e.contract.check(e.t, req, raw, resp, respBody)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: respBody}
}

// do sends a request as acme.
func (e *env) do(method, path string, body any) response {
	e.t.Helper()
	return e.request(method, path, body, e.key)
}

// must sends a request as acme and fails unless it answers want.
func (e *env) must(want int, method, path string, body any) response {
	e.t.Helper()
	r := e.do(method, path, body)
	if r.Status != want {
		e.t.Fatalf("%s %s = %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// invalid sends a request as acme and checks it is refused with code,
// naming exactly fields (in any order) when fields are given.
func (e *env) invalid(code string, method, path string, body any, fields ...string) response {
	e.t.Helper()
	r := e.do(method, path, body)
	want := http.StatusBadRequest
	if r.Status != want {
		e.t.Fatalf("%s %s %v = %d, want %d: %s", method, path, body, r.Status, want, r.Body)
	}
	if got := r.ErrorCode(e.t); got != code {
		e.t.Fatalf("%s %s: code %q, want %q: %s", method, path, got, code, r.Body)
	}
	if len(fields) > 0 {
		got := r.ErrorFields(e.t)
		if !sameSet(got, fields) {
			e.t.Fatalf("%s %s %v: fields %v, want %v", method, path, body, got, fields)
		}
	}
	return r
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// createAgent creates an agent as acme from a minimal body plus extra keys.
func (e *env) createAgent(extra map[string]any) map[string]any {
	e.t.Helper()
	body := map[string]any{"name": "Agent", "promptTemplate": "You help {{customer_name}}."}
	for k, v := range extra {
		body[k] = v
	}
	return e.must(http.StatusCreated, "POST", "/v1/agents", body).Data(e.t)
}

func (e *env) create(path string, body any) map[string]any {
	e.t.Helper()
	return e.must(http.StatusCreated, "POST", path, body).Data(e.t)
}

func str(n int) string { return strings.Repeat("x", n) }

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
