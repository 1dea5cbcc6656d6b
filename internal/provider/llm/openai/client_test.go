package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// backstop bounds every Stream call in these tests: a call that hangs ends
// with context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

// testBundle is one client talking to one fake server.
type testBundle struct {
	client *Client
	server *llmtest.Server
}

// setup starts a fake answering with script and a client for it with short
// timeouts; change applies to the config before New.
func setup(t *testing.T, script func(llmtest.Request) llmtest.Reply, change ...func(*Config)) testBundle {
	t.Helper()
	server := llmtest.New(t, script)
	cfg := Config{
		BaseURL:           server.URL,
		APIKey:            "sk-test-0123456789abcdef",
		Model:             "gpt-test",
		FirstTokenTimeout: 200 * time.Millisecond,
		StallTimeout:      200 * time.Millisecond,
		HTTPClient:        testHTTPClient(t),
	}
	for _, f := range change {
		f(&cfg)
	}
	return testBundle{client: New(cfg), server: server}
}

// testHTTPClient has a transport of its own whose idle connections are
// closed when the test ends, so no keep-alive goroutine outlives it.
func testHTTPClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func reply(r llmtest.Reply) func(llmtest.Request) llmtest.Reply {
	return func(llmtest.Request) llmtest.Reply { return r }
}

// stream runs one Stream call under the backstop, collecting the deltas.
func (b testBundle) stream(t *testing.T, r llm.Request) (llm.Result, []string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	var deltas []string
	res, err := b.client.Stream(ctx, r, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stream still running after %s", backstop)
	}
	return res, deltas, err
}

var hello = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hello?"}}}

func TestStreamText(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"Hel", "lo, ", "wörld", "!"}}))
	res, deltas, err := b.stream(t, hello)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Hel", "lo, ", "wörld", "!"}, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if res.Text != "Hello, wörld!" || res.FinishReason != "stop" || res.ToolCalls != nil {
		t.Errorf("result = %+v", res)
	}
	if res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 {
		t.Errorf("usage = %+v, want the fake's estimate", res.Usage)
	}
}

func TestStreamToolCall(t *testing.T) {
	args := `{"city":"Zürich","days":[1,2,3],"units":"metric"}`
	b := setup(t, reply(llmtest.Reply{
		ToolCalls: []llmtest.ToolCallReply{{ID: "call_1", Name: "get_weather", Arguments: args}},
	}))
	res, deltas, err := b.stream(t, hello)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Result{
		ToolCalls:    []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: args}},
		FinishReason: "tool_calls",
		Usage:        res.Usage,
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(deltas) != 0 {
		t.Errorf("onText got %q for a tool call", deltas)
	}
}

func TestStreamParallelToolCalls(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{
		Text: []string{"One moment."},
		ToolCalls: []llmtest.ToolCallReply{
			{ID: "call_a", Name: "lookup_order", Arguments: `{"order_id":"A-1234567"}`},
			{ID: "call_b", Name: "transfer_call", Arguments: `{}`},
		},
	}))
	res, _, err := b.stream(t, hello)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_a", Name: "lookup_order", Arguments: `{"order_id":"A-1234567"}`},
		{ID: "call_b", Name: "transfer_call", Arguments: `{}`},
	}
	if diff := cmp.Diff(want, res.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if res.Text != "One moment." || res.FinishReason != "tool_calls" {
		t.Errorf("result = %+v", res)
	}
}

func TestRequestBody(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"ok"}}))
	temp := 0.3
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city": map[string]any{"type": "string", "description": "City name"},
		},
		"required": []any{"city"},
	}
	req := llm.Request{
		Model: "gpt-other",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are a receptionist."},
			{Role: llm.RoleUser, Content: "Weather in Bern?"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Bern"}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"temp_c":21}`},
			{Role: llm.RoleAssistant, Content: "It is 21 degrees."},
		},
		Tools:           []llm.Tool{{Name: "get_weather", Description: "Current weather", Parameters: schema}},
		Temperature:     &temp,
		ReasoningEffort: "low",
		MaxTokens:       256,
	}
	if _, _, err := b.stream(t, req); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.stream(t, hello); err != nil {
		t.Fatal(err)
	}

	got := b.server.Requests()
	if len(got) != 2 {
		t.Fatalf("server got %d requests, want 2", len(got))
	}
	full, bare := got[0], got[1]
	if full.Model != "gpt-other" || bare.Model != "gpt-test" {
		t.Errorf("models = %q, %q; want the request's, then the config's", full.Model, bare.Model)
	}
	wantMessages := []map[string]any{
		{"role": "system", "content": "You are a receptionist."},
		{"role": "user", "content": "Weather in Bern?"},
		{"role": "assistant", "tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Bern"}`},
		}}},
		{"role": "tool", "tool_call_id": "call_1", "content": `{"temp_c":21}`},
		{"role": "assistant", "content": "It is 21 degrees."},
	}
	if diff := cmp.Diff(wantMessages, full.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	wantTools := []map[string]any{{
		"type": "function",
		"function": map[string]any{
			"name": "get_weather", "description": "Current weather", "parameters": schema,
		},
	}}
	if diff := cmp.Diff(wantTools, full.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if full.Temperature == nil || *full.Temperature != 0.3 {
		t.Errorf("temperature = %v, want 0.3", full.Temperature)
	}
	if full.ReasoningEffort != "low" || full.MaxCompletionTokens != 256 {
		t.Errorf("reasoning_effort = %q, max_completion_tokens = %d", full.ReasoningEffort, full.MaxCompletionTokens)
	}
	for _, key := range []string{"temperature", "reasoning_effort", "max_completion_tokens", "max_tokens", "tools", "response_format"} {
		if _, ok := bare.Body[key]; ok {
			t.Errorf("unset %s sent: %v", key, bare.Body[key])
		}
	}
	for i, r := range got {
		if !r.Stream || !r.IncludeUsage {
			t.Errorf("request %d: stream = %v, include_usage = %v; want both", i, r.Stream, r.IncludeUsage)
		}
		if auth := r.Header.Get("Authorization"); auth != "Bearer sk-test-0123456789abcdef" {
			t.Errorf("request %d: Authorization = %q", i, auth)
		}
	}
}

func TestResponseFormat(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{`{"passed":`, `true}`}}))
	schema := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"passed": map[string]any{"type": "boolean"}},
		"required":             []any{"passed"},
		"additionalProperties": false,
	}
	for _, f := range []llm.JSONSchema{
		{Name: "verdict", Description: "Whether the agent passed", Schema: schema, Strict: true},
		{Name: "loose", Schema: schema},
	} {
		r := hello
		r.ResponseFormat = &f
		res, _, err := b.stream(t, r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != `{"passed":true}` {
			t.Errorf("text = %q; the structured answer comes back as text", res.Text)
		}
	}
	got := b.server.Requests()
	if len(got) != 2 {
		t.Fatalf("server got %d requests, want 2", len(got))
	}
	want := []map[string]any{
		{"type": "json_schema", "json_schema": map[string]any{
			"name": "verdict", "description": "Whether the agent passed", "schema": schema, "strict": true,
		}},
		{"type": "json_schema", "json_schema": map[string]any{"name": "loose", "schema": schema}},
	}
	for i, r := range got {
		if diff := cmp.Diff(want[i], r.ResponseFormat); diff != "" {
			t.Errorf("request %d: response_format (-want +got):\n%s", i, diff)
		}
	}
}

func TestUsage(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{
		Text:  []string{"Hi"},
		Usage: &llmtest.Usage{PromptTokens: 1200, CompletionTokens: 7, CachedTokens: 1024},
	}))
	res, _, err := b.stream(t, hello)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{PromptTokens: 1200, CompletionTokens: 7, CachedPromptTokens: 1024}
	if res.Usage != want {
		t.Errorf("usage = %+v, want %+v", res.Usage, want)
	}
}

func TestOnTextErrorStopsStream(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{
		Text:     []string{"one ", "two ", "three ", "four ", "five"},
		ChunkGap: 10 * time.Millisecond,
	}))
	errBargeIn := errors.New("caller spoke")
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	var deltas []string
	res, err := b.client.Stream(ctx, hello, func(d string) error {
		deltas = append(deltas, d)
		if len(deltas) == 2 {
			return errBargeIn
		}
		return nil
	})
	if err != errBargeIn {
		t.Fatalf("err = %v, want onText's error as is", err)
	}
	if res.Text != "one two " || len(deltas) != 2 {
		t.Errorf("text = %q after deltas %q, want the stream stopped at the error", res.Text, deltas)
	}
}

func TestCancelMidStream(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"Let me "}, Hang: true}),
		func(c *Config) { c.StallTimeout = backstop })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.client.Stream(ctx, hello, func(string) error {
			cancel()
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		for _, kind := range []error{llm.ErrTimeout, llm.ErrUnavailable, llm.ErrRejected} {
			if errors.Is(err, kind) {
				t.Errorf("err = %v, a cancel is not %v", err, kind)
			}
		}
	case <-time.After(backstop):
		t.Fatal("Stream did not return after ctx was canceled")
	}
}

func TestFirstTokenTimeout(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"late"}, Delay: backstop}))
	_, deltas, err := b.stream(t, hello)
	if !errors.Is(err, llm.ErrTimeout) || !strings.Contains(err.Error(), "first token") {
		t.Fatalf("err = %v, want ErrTimeout for the first token", err)
	}
	if len(deltas) != 0 {
		t.Errorf("deltas = %q", deltas)
	}
}

func TestFirstTokenTimeoutBeforeHeaders(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Status: http.StatusInternalServerError, Delay: backstop}),
		func(c *Config) { c.MaxRetries = -1 })
	if _, _, err := b.stream(t, hello); !errors.Is(err, llm.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestRoleChunkIsNoFirstToken(t *testing.T) {
	// The role chunk and an empty content delta come at once, the text
	// never (a reasoning model thinking): still a first-token timeout.
	b := setup(t, reply(llmtest.Reply{Text: []string{""}, Hang: true}), func(c *Config) { c.StallTimeout = backstop })
	if _, _, err := b.stream(t, hello); !errors.Is(err, llm.ErrTimeout) || !strings.Contains(err.Error(), "first token") {
		t.Fatalf("err = %v, want ErrTimeout for the first token", err)
	}
}

func TestHeadersThenNothing(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Hang: true}), func(c *Config) { c.StallTimeout = backstop })
	if _, _, err := b.stream(t, hello); !errors.Is(err, llm.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestStall(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"Sure, "}, Hang: true}),
		func(c *Config) { c.FirstTokenTimeout = backstop })
	res, deltas, err := b.stream(t, hello)
	if !errors.Is(err, llm.ErrTimeout) || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err = %v, want ErrTimeout for a stall", err)
	}
	if res.Text != "Sure, " || len(deltas) != 1 {
		t.Errorf("text = %q, deltas = %q; want what came before the stall", res.Text, deltas)
	}
}

func TestStallAfterFinishIsNoFailure(t *testing.T) {
	srv := newHangingSSEServer(t,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Bye."},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	)
	c := New(Config{BaseURL: srv + "/v1", Model: "m", StallTimeout: 100 * time.Millisecond, HTTPClient: testHTTPClient(t)})
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	res, err := c.Stream(ctx, hello, nil)
	if err != nil || res.Text != "Bye." || res.FinishReason != "stop" {
		t.Fatalf("Stream = %+v, %v; want the finished answer", res, err)
	}
}

func TestServerErrorRetriedOnce(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Status: http.StatusInternalServerError, Message: "The server had an error"}))
	_, _, err := b.stream(t, hello)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "The server had an error") {
		t.Fatalf("err = %v, want ErrUnavailable with the provider's message", err)
	}
	if n := len(b.server.Requests()); n != 2 {
		t.Errorf("server got %d requests, want 2 (one retry)", n)
	}
}

func TestRetrySucceeds(t *testing.T) {
	var n atomic.Int32
	b := setup(t, func(llmtest.Request) llmtest.Reply {
		if n.Add(1) == 1 {
			return llmtest.Reply{Status: http.StatusBadGateway, Header: http.Header{"Retry-After-Ms": {"10"}}}
		}
		return llmtest.Reply{Text: []string{"fine"}}
	})
	res, _, err := b.stream(t, hello)
	if err != nil || res.Text != "fine" {
		t.Fatalf("Stream = %+v, %v; want the retry's answer", res, err)
	}
}

func TestRateLimited(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{
		Status:  http.StatusTooManyRequests,
		Message: "Rate limit reached for gpt-test",
		Header:  http.Header{"Retry-After-Ms": {"10"}},
	}))
	_, _, err := b.stream(t, hello)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "Rate limit reached") {
		t.Fatalf("err = %v, want ErrUnavailable with the provider's message", err)
	}
	if n := len(b.server.Requests()); n != 2 {
		t.Errorf("server got %d requests, want 2 (one retry)", n)
	}
}

func TestRateLimitedLongRetryAfterNotWaited(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}}))
	if _, _, err := b.stream(t, hello); !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if n := len(b.server.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1 (a minute's wait is no retry)", n)
	}
}

func TestUnauthorizedRejected(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided: sk-test."}))
	_, _, err := b.stream(t, hello)
	if !errors.Is(err, llm.ErrRejected) || !strings.Contains(err.Error(), "Incorrect API key provided") {
		t.Fatalf("err = %v, want ErrRejected with the provider's message", err)
	}
	if n := len(b.server.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1 (no retry)", n)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := New(Config{
		BaseURL: "http://" + addr + "/v1", Model: "gpt-test",
		FirstTokenTimeout: 2 * time.Second, HTTPClient: testHTTPClient(t),
	})
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	_, err = c.Stream(ctx, hello, nil)
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestErrorEventMidStream(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"Well"}, StreamError: true, Message: "The model overloaded"}))
	res, _, err := b.stream(t, hello)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "The model overloaded") {
		t.Fatalf("err = %v, want ErrUnavailable with the provider's message", err)
	}
	if res.Text != "Well" {
		t.Errorf("text = %q", res.Text)
	}
}

func TestNonOpenAIErrorBody(t *testing.T) {
	// Ollama answers {"error":"..."}; a proxy in front may answer HTML.
	for _, tc := range []struct {
		status int
		body   string
		kind   error
		want   string
	}{
		{http.StatusNotFound, `{"error":"model \"llama9\" not found, try pulling it first"}`, llm.ErrRejected, `model "llama9" not found`},
		{http.StatusBadGateway, "<html><body><h1>502 Bad Gateway</h1></body></html>", llm.ErrUnavailable, "502 Bad Gateway"},
	} {
		srv := newRawServer(t, tc.status, tc.body)
		c := New(Config{BaseURL: srv + "/v1", Model: "llama9", MaxRetries: -1, HTTPClient: testHTTPClient(t)})
		_, err := c.Stream(t.Context(), hello, nil)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d %s: err = %v, want %v containing %q", tc.status, tc.body, err, tc.kind, tc.want)
		}
	}
}

func TestBadRequestNotSent(t *testing.T) {
	b := setup(t, reply(llmtest.Reply{Text: []string{"ok"}}))
	for _, r := range []llm.Request{
		{Messages: []llm.Message{{Role: "narrator", Content: "x"}}},
		{Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}},
		{Messages: hello.Messages, ResponseFormat: &llm.JSONSchema{Schema: map[string]any{"type": "object"}}},
	} {
		if _, _, err := b.stream(t, r); !errors.Is(err, llm.ErrRejected) {
			t.Errorf("%+v: err = %v, want ErrRejected", r, err)
		}
	}
	noModel := New(Config{BaseURL: b.server.URL, HTTPClient: testHTTPClient(t)})
	if _, err := noModel.Stream(t.Context(), hello, nil); !errors.Is(err, llm.ErrRejected) {
		t.Errorf("no model: err = %v, want ErrRejected", err)
	}
	if n := len(b.server.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestOwnTransportClosed(t *testing.T) {
	server := llmtest.New(t, reply(llmtest.Reply{Text: []string{"ok"}}))
	c := New(Config{BaseURL: server.URL, Model: "gpt-test"})
	t.Cleanup(c.Close)
	if _, err := c.Stream(t.Context(), hello, nil); err != nil {
		t.Fatal(err)
	}
}
