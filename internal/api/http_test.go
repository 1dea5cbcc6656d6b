package api

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/org"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	for name, key := range map[string]string{
		"missing": "", "unknown": "pk_live_" + strings.Repeat("A", 43), "garbage": "hello", "huge": strings.Repeat("k", 5000),
	} {
		r := e.request("GET", "/v1/agents", nil, key)
		if r.Status != http.StatusUnauthorized || r.ErrorCode(t) != "unauthorized" {
			t.Errorf("%s key: %d %s", name, r.Status, r.Body)
		}
	}
	// Refused before anything is done: no agent created.
	if r := e.request("POST", "/v1/agents", map[string]any{"name": "A", "promptTemplate": "P"}, ""); r.Status != http.StatusUnauthorized {
		t.Errorf("unauthenticated create = %d", r.Status)
	}
	if countAgents(e) != 0 {
		t.Error("unauthenticated create stored an agent")
	}
	// A revoked key stops working at once.
	svc := e.server.Orgs
	key, _, err := svc.CreateKey(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, "GET", "/v1/agents", nil)
	keys, _ := svc.Keys(context.Background(), "acme")
	var newest string
	for _, k := range keys {
		if strings.HasPrefix(key, k.Prefix) {
			newest = k.ID
		}
	}
	if err := svc.RevokeKey(context.Background(), "acme", newest); err != nil {
		t.Fatal(err)
	}
	if r := e.request("GET", "/v1/agents", nil, key); r.Status != http.StatusUnauthorized {
		t.Errorf("revoked key = %d", r.Status)
	}
	e.must(http.StatusOK, "GET", "/v1/agents", nil) // the other acme key still works
	if !strings.HasPrefix(key, org.KeyPrefix) || len(key) < 40 {
		t.Errorf("key %q lacks the prefix or entropy", key)
	}
}

func TestRoutingErrors(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/v1/nope", "/v2/agents", "/", "/v1/agents/x/y/z"} {
		if r := e.do("GET", path, nil); r.Status != http.StatusNotFound || r.ErrorCode(t) != "not_found" {
			t.Errorf("GET %s = %d %s", path, r.Status, r.Body)
		}
	}
	// A malformed id in a path is 404, like an unknown one.
	for _, path := range []string{"/v1/agents/not-a-uuid", "/v1/agents/123", "/v1/folders/x", "/v1/agents/0190d4c3-0000-7000-8000-000000000000"} {
		if r := e.do("GET", path, nil); r.Status != http.StatusNotFound || r.ErrorCode(t) != "not_found" {
			t.Errorf("GET %s = %d %s", path, r.Status, r.Body)
		}
	}
	r := e.do("PUT", "/v1/agents", map[string]any{})
	if r.Status != http.StatusMethodNotAllowed || r.ErrorCode(t) != "method_not_allowed" || !strings.Contains(r.Header.Get("Allow"), "POST") {
		t.Errorf("PUT /v1/agents = %d %v %s", r.Status, r.Header.Get("Allow"), r.Body)
	}
	if r := e.do("POST", "/v1/organization", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/organization = %d", r.Status)
	}
}

func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	big := `{"name":"A","promptTemplate":"` + strings.Repeat("p", 1<<20) + `"}`
	r := e.do("POST", "/v1/agents", big)
	if r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode(t) != "payload_too_large" {
		t.Fatalf("1 MiB body = %d %s", r.Status, r.Body)
	}
	fits := `{"name":"A","promptTemplate":"` + strings.Repeat("p", 1<<20-100) + `"}`
	e.must(http.StatusCreated, "POST", "/v1/agents", fits)
	if countAgents(e) != 1 {
		t.Error("oversized body stored something")
	}
}

func TestRequestIDsAndEnvelope(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/v1/agents", nil)
	if !strings.HasPrefix(r.Header.Get("X-Request-Id"), "req_") {
		t.Errorf("X-Request-Id = %q", r.Header.Get("X-Request-Id"))
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/v1/agents", nil)
	req.Header.Set("X-Request-Id", "trace-123")
	req.Header.Set("x-api-key", e.key)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "trace-123" {
		t.Errorf("caller's request id not kept: %q", got)
	}
	if r := e.request("GET", "/v1/nope", nil, ""); r.Header.Get("X-Request-Id") == "" {
		t.Error("error answers lack X-Request-Id")
	}
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, withRateLimit(0.5, 3))
	for i := range 3 {
		if r := e.do("GET", "/v1/agents", nil); r.Status != http.StatusOK {
			t.Fatalf("request %d = %d", i, r.Status)
		}
	}
	r := e.do("GET", "/v1/agents", nil)
	if r.Status != http.StatusTooManyRequests || r.ErrorCode(t) != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("4th request = %d %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	// Limits are per key: globex is unaffected.
	if r := e.request("GET", "/v1/agents", nil, e.otherKey); r.Status != http.StatusOK {
		t.Errorf("other key = %d", r.Status)
	}
}

func TestPublicEndpoints(t *testing.T) {
	e := newEnv(t)
	if r := e.request("GET", "/healthz", nil, ""); r.Status != http.StatusOK || string(bytes.TrimSpace(r.Body)) != `{"status":"ok"}` {
		t.Errorf("healthz = %d %s", r.Status, r.Body)
	}
	e.do("GET", "/v1/agents", nil)
	m := e.request("GET", "/metrics", nil, "")
	if m.Status != http.StatusOK || !strings.Contains(string(m.Body), `parley_http_requests_total{code="200",method="GET",route="GET /v1/agents"}`) ||
		!strings.Contains(string(m.Body), "parley_http_request_duration_seconds_bucket") {
		t.Errorf("metrics = %d\n%s", m.Status, m.Body)
	}
	doc := e.request("GET", "/v1/openapi.yaml", nil, "")
	if doc.Status != http.StatusOK || !strings.Contains(string(doc.Body), "openapi: 3.1") {
		t.Errorf("openapi.yaml = %d %.100s", doc.Status, doc.Body)
	}
}

func TestQueryParametersOnlyWhereRead(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/agents/" + a["id"].(string) + "?foo=bar"},
		{"PATCH", "/v1/agents/" + a["id"].(string) + "?minimal=true"},
		{"POST", "/v1/agents?dryRun=true"},
		{"GET", "/v1/organization?x=1"},
	} {
		r := e.do(c.method, c.path, map[string]any{"name": "A", "promptTemplate": "P"})
		if r.Status != http.StatusBadRequest || r.ErrorCode(t) != "validation_failed" {
			t.Errorf("%s %s = %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	if countAgents(e) != 1 {
		t.Error("a refused create stored an agent")
	}
}

func TestBlankNamesAreRefused(t *testing.T) {
	e := newEnv(t)
	e.invalid("validation_failed", "POST", "/v1/folders", map[string]any{"name": "  "}, "name")
	e.invalid("validation_failed", "POST", "/v1/knowledge-bases", map[string]any{"name": "\t"}, "name")
	e.invalid("validation_failed", "POST", "/v1/sip-trunks", map[string]any{"friendlyName": " ", "host": "h.example"}, "friendlyName")
	e.invalid("validation_failed", "PATCH", "/v1/organization", map[string]any{"name": "   "}, "name")
}

func TestHealthWhenTheDatabaseIsGone(t *testing.T) {
	e := newEnv(t)
	e.store.Close()
	r := e.request("GET", "/healthz", nil, "")
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode(t) != "unavailable" {
		t.Errorf("healthz = %d %s", r.Status, r.Body)
	}
}
