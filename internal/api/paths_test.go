package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Paths with dot or empty segments, escaped or not, name no route: 404 in
// the error shape, never a redirect to the cleaned path.
func TestDotSegmentsAreNotFound(t *testing.T) {
	e := newEnv(t)
	a := e.createAgent(nil)["id"].(string)
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/agents/../calls"},
		{"GET", "/v1/agents/./" + a},
		{"GET", "/v1/agents/" + a + "/.."},
		{"GET", "/v1/./agents"},
		{"GET", "/v1/agents/%2e%2e/calls"},
		{"GET", "/v1/agents/%2E%2E"},
		{"GET", "/v1/agents/%2e"},
		{"GET", "/v1/agents/.%2e/calls"},
		{"GET", "/v1//agents"},
		{"GET", "/v1/agents/"},
		{"DELETE", "/v1/folders/../agents/" + a},
		{"POST", "/v1/calls/../agents"},
		{"GET", "/v1/messaging-connections/x/../../organization"},
		{"GET", "/healthz/."},
	} {
		req, _ := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(`{"name":"A","promptTemplate":"P"}`))
		req.URL.Opaque = "//" + req.URL.Host + c.path // sent exactly as written
		req.Header.Set("x-api-key", e.key)
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := response{Status: resp.StatusCode, Header: resp.Header, Body: body}
		if r.Status != http.StatusNotFound || r.ErrorCode(t) != codeNotFound || resp.Header.Get("Location") != "" ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s = %d (Location %q) %s", c.method, c.path, r.Status, resp.Header.Get("Location"), bytes.TrimSpace(body))
		}
	}
	if n := countAgents(e); n != 1 {
		t.Errorf("%d agents: a dot path reached a handler", n)
	}
	e.must(http.StatusOK, "GET", "/v1/agents/"+a, nil) // nothing deleted
	// Clean paths are untouched, method checks included.
	e.must(http.StatusOK, "GET", "/v1/calls", nil)
	if r := e.do("PUT", "/v1/agents", nil); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("PUT /v1/agents = %d", r.Status)
	}
}

// Knowledge sources take bodies up to 2 MiB, every other route 1 MiB.
func TestSourceBodyLimit(t *testing.T) {
	e := newEnv(t)
	e.contract = nil // 2 MiB bodies through the validator are slow, and not what is tested
	kb := e.create("/v1/knowledge-bases", map[string]any{"name": "KB"})["id"].(string)
	sources := "/v1/knowledge-bases/" + kb + "/sources"
	// 100 000 characters (the content limit), each escaped in 12 bytes,
	// padded with white space to exactly the limit.
	source := func(size int) string {
		body := `{"sourceType":"text","displayName":"Big","content":"` + strings.Repeat(`\ud83d\ude00`, 100_000) + `"}`
		return strings.Replace(body, "{", "{"+strings.Repeat(" ", size-len(body)), 1)
	}
	if got := len(source(maxSourceBody)); got != 2<<20 {
		t.Fatalf("body of %d bytes", got)
	}
	src := e.must(http.StatusCreated, "POST", sources, source(maxSourceBody)).Data(t)
	if n := len([]rune(src["content"].(string))); n != 100_000 {
		t.Errorf("content of %d characters", n)
	}
	r := e.do("POST", sources, source(maxSourceBody+1))
	if r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode(t) != codePayloadTooLarge {
		t.Errorf("2 MiB + 1 = %d %s", r.Status, r.Body)
	}
	if l := e.must(http.StatusOK, "GET", sources, nil).JSON(t)["data"].([]any); len(l) != 1 {
		t.Errorf("%d sources", len(l))
	}
	// Other routes, the same base's included, keep 1 MiB.
	overMiB := `{"query":"x"` + strings.Repeat(" ", 1<<20) + `}`
	for _, path := range []string{"/v1/knowledge-bases/" + kb + "/query", "/v1/knowledge-bases", "/v1/agents"} {
		if r := e.do("POST", path, overMiB); r.Status != http.StatusRequestEntityTooLarge || r.ErrorCode(t) != codePayloadTooLarge {
			t.Errorf("POST %s, over 1 MiB = %d %s", path, r.Status, r.Body)
		}
	}
}

// Ids in paths that are not of their resource's shape, bad text included,
// name nothing and never reach the store (PostgreSQL refused them with a 500).
func TestMalformedPathIDsOnEveryStore(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			e := newEnv(t, engine)
			org := e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)["id"].(string)
			for _, c := range []struct{ method, path string }{
				{"GET", "/v1/messages/msg_%00"}, {"GET", "/v1/messages/msg_%FF"}, {"GET", "/v1/messages/msg_" + strings.Repeat("g", 24)},
				{"GET", "/v1/messaging-connections/mc_%00"}, {"DELETE", "/v1/messaging-connections/%C0%80"},
				{"POST", "/v1/messaging-connections/%00/inbound?org=" + org}, {"POST", "/v1/messaging-connections/%FF/status?org=" + org},
				{"GET", "/v1/agents/%00"}, {"GET", "/v1/calls/%ED%A0%80/recording"},
			} {
				if r := e.do(c.method, c.path, nil); r.Status != http.StatusNotFound || r.ErrorCode(t) != codeNotFound {
					t.Errorf("%s %s = %d %s", c.method, c.path, r.Status, r.Body)
				}
			}
		})
	}
}
