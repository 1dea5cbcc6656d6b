package api

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// faultyStore is a real store whose chosen queries fail as an unreachable
// database's do (store.ErrUnavailable), inside the real transaction: what
// the failed query's transaction wrote before it is rolled back for real.
type faultyStore struct {
	store.Store
	mu    sync.Mutex
	down  map[string]bool // query name -> fails
	hangs bool            // Ping waits for its context
}

func (s *faultyStore) fail(queries ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = map[string]bool{}
	for _, q := range queries {
		s.down[q] = true
	}
}

// failing is the error of query, or nil when it works.
func (s *faultyStore) failing(query string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down[query] {
		return fmt.Errorf("%s: %w: dial tcp 127.0.0.1:5432: connect: connection refused", query, store.ErrUnavailable)
	}
	return nil
}

func (s *faultyStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.View(ctx, func(tx store.Tx) error { return fn(faultyTx{tx, s}) })
}

func (s *faultyStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(faultyTx{tx, s}) })
}

func (s *faultyStore) Ping(ctx context.Context) error {
	s.mu.Lock()
	hangs := s.hangs
	s.mu.Unlock()
	if hangs {
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.Ping(ctx)
}

type faultyTx struct {
	store.Tx
	s *faultyStore
}

func (t faultyTx) GetAPIKeyByHash(ctx context.Context, hash []byte) (model.APIKey, error) {
	if err := t.s.failing("GetAPIKeyByHash"); err != nil {
		return model.APIKey{}, err
	}
	return t.Tx.GetAPIKeyByHash(ctx, hash)
}

func (t faultyTx) ListCalls(ctx context.Context, orgID string, f store.CallFilter) ([]model.Call, int, error) {
	if err := t.s.failing("ListCalls"); err != nil {
		return nil, 0, err
	}
	return t.Tx.ListCalls(ctx, orgID, f)
}

func (t faultyTx) GetIdempotencyKey(ctx context.Context, orgID, scope, key string, since time.Time) (model.IdempotencyKey, error) {
	if err := t.s.failing("GetIdempotencyKey"); err != nil {
		return model.IdempotencyKey{}, err
	}
	return t.Tx.GetIdempotencyKey(ctx, orgID, scope, key, since)
}

func (t faultyTx) PutIdempotencyKey(ctx context.Context, k *model.IdempotencyKey, since time.Time) error {
	if err := t.s.failing("PutIdempotencyKey"); err != nil {
		return err
	}
	return t.Tx.PutIdempotencyKey(ctx, k, since)
}

func newFaultyEnv(t *testing.T, opts ...envOption) (*env, *faultyStore) {
	t.Helper()
	f := &faultyStore{}
	open := onStore(func(t testing.TB) store.Store {
		f.Store = openSQLite(t)
		return f
	})
	return newEnv(t, append([]envOption{open}, opts...)...), f
}

// wantUnavailable fails t unless r is 503 unavailable in the house shape
// with Retry-After.
func wantUnavailable(t *testing.T, what string, r response) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("%s = %d, want 503: %s", what, r.Status, r.Body)
	}
	if got := r.ErrorCode(t); got != "unavailable" {
		t.Errorf("%s: code %q, want unavailable", what, got)
	}
	if got := r.Header.Get("Retry-After"); got != retryAfterUnavailable {
		t.Errorf("%s: Retry-After %q, want %q", what, got, retryAfterUnavailable)
	}
	if got := r.Header.Get("X-Request-Id"); got == "" {
		t.Errorf("%s: no X-Request-Id", what)
	}
}

// An unreachable database answers 503 unavailable with Retry-After, not
// 500: on the key's lookup, on a read, on an Idempotency-Key's lookup, and
// on a create, which leaves nothing behind.
func TestUnavailableDatabaseAnswers503(t *testing.T) {
	e, f := newFaultyEnv(t)
	a := e.createAgent(nil)
	body := callBody(a["id"], "+14155550101", nil)
	key := http.Header{"Idempotency-Key": {"retry-me"}}

	f.fail("GetAPIKeyByHash")
	r := e.do("GET", "/v1/calls", nil)
	wantUnavailable(t, "the key's lookup", r)
	if got := r.JSON(t)["error"].(map[string]any)["message"]; got != messageUnavailable {
		t.Errorf("message %q, want %q", got, messageUnavailable)
	}

	f.fail("ListCalls")
	wantUnavailable(t, "a read", e.do("GET", "/v1/calls", nil))

	f.fail("GetIdempotencyKey")
	wantUnavailable(t, "an Idempotency-Key's lookup", e.requestWith("POST", "/v1/calls", body, e.key, key))

	// The call is inserted, then the key's write fails: the transaction
	// rolls back, the call with it.
	f.fail("PutIdempotencyKey")
	wantUnavailable(t, "a create", e.requestWith("POST", "/v1/calls", body, e.key, key))

	f.fail()
	if calls := e.must(http.StatusOK, "GET", "/v1/calls", nil).List(t); len(calls) != 0 {
		t.Fatalf("the refused create left %d calls", len(calls))
	}
	r = e.requestWith("POST", "/v1/calls", body, e.key, key)
	if r.Status != http.StatusCreated || r.Header.Get(replayedHeader) != "" {
		t.Fatalf("the retry once the database is back = %d (replayed %q): %s", r.Status, r.Header.Get(replayedHeader), r.Body)
	}
	if calls := e.must(http.StatusOK, "GET", "/v1/calls", nil).List(t); len(calls) != 1 {
		t.Fatalf("%d calls after the retry, want 1", len(calls))
	}
}

// A database that hangs does not hang the probes: they answer 503 within
// their bound.
func TestProbesOfAHungDatabase(t *testing.T) {
	// Long enough for a ping on a loaded machine: the hung one waits it out.
	e, f := newFaultyEnv(t, func(c *envConfig) { c.HealthTimeout = time.Second })
	if r := e.request("GET", "/readyz", nil, ""); r.Status != http.StatusOK || r.JSON(t)["status"] != "ready" {
		t.Fatalf("readyz = %d %s, want 200 ready", r.Status, r.Body)
	}
	f.mu.Lock()
	f.hangs = true
	f.mu.Unlock()
	if r := e.request("GET", "/healthz", nil, ""); r.Status != http.StatusServiceUnavailable || r.ErrorCode(t) != "unavailable" {
		t.Errorf("healthz = %d %s, want 503 unavailable", r.Status, r.Body)
	}
	if r := e.request("GET", "/readyz", nil, ""); r.Status != http.StatusServiceUnavailable || r.JSON(t)["status"] != "unavailable" {
		t.Errorf("readyz = %d %s, want 503 unavailable", r.Status, r.Body)
	}
}

// Draining (SIGTERM, while live calls finish): /readyz says so, every
// route but the probes answers 503 with Retry-After, and /healthz and
// /metrics still answer.
func TestDraining(t *testing.T) {
	e := newEnv(t)
	e.server.Drain()
	if r := e.request("GET", "/readyz", nil, ""); r.Status != http.StatusServiceUnavailable || r.JSON(t)["status"] != "draining" {
		t.Errorf("readyz = %d %s, want 503 draining", r.Status, r.Body)
	}
	r := e.do("GET", "/v1/agents", nil)
	wantUnavailable(t, "a read while draining", r)
	if got := r.JSON(t)["error"].(map[string]any)["message"]; got != messageShuttingDown {
		t.Errorf("message %q, want %q", got, messageShuttingDown)
	}
	wantUnavailable(t, "a create while draining", e.do("POST", "/v1/agents", map[string]any{"name": "a", "promptTemplate": "p"}))
	wantUnavailable(t, "the contract while draining", e.request("GET", "/v1/openapi.yaml", nil, ""))
	if r := e.request("GET", "/healthz", nil, ""); r.Status != http.StatusOK {
		t.Errorf("healthz while draining = %d %s", r.Status, r.Body)
	}
	if r := e.request("GET", "/metrics", nil, ""); r.Status != http.StatusOK {
		t.Errorf("metrics while draining = %d", r.Status)
	}
}
