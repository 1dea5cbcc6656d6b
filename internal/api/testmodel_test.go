package api

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/webhook"
)

// modelConfig is what withModel sets up.
type modelConfig struct {
	// calls gives call-mode runs the env's call queue (default: none, as
	// on a server without telephony).
	calls bool
}

// withModel runs the env's test runner and test generator on a fake
// language model (testModel) and starts the runner; it stops at cleanup.
func withModel(calls bool) envOption {
	return func(c *envConfig) { c.model = &modelConfig{calls: calls} }
}

// Markers the fake model reads in test cases: a script holding
// scriptHang makes the simulated caller's model hang; a rubric holding
// one of the verdict markers gets that verdict (default: pass). Flaky
// verdicts alternate pass, fail, pass, ... over the fake's life.
const (
	scriptHang       = "HANG-THE-CALLER"
	verdictFail      = "verdict:fail"
	verdictFlaky     = "verdict:flaky"
	verdictMalformed = "verdict:malformed"
)

// callerPromptStart opens the simulated caller's system prompt.
const callerPromptStart = "You are role-playing a person who phones a business"

// generatedTests is what the fake generator answers.
const generatedTests = `{"tests":[{"name":"Books a table for two","script":"You are a caller who wants a table for two tonight at 8.","scoringRubric":"The agent confirms the party size and the time."}]}`

// testModel is the fake language model of a test-suite env, on loopback
// behind the real openai client. It plays the simulated caller, the agent
// under test, the judge and the generator, telling them apart by their
// requests: the judge's and the generator's ask for structured output
// (response_format, named verdict or test_cases), the caller's system
// prompt is callerPrompt's, anything else is the agent's.
type testModel struct {
	*llmtest.Server
	hung      chan struct{}         // a hanging caller request arrived
	delivered chan webhook.Delivery // test_run.completed deliveries
	flaky     atomic.Int64
}

func startTestRunner(t testing.TB, cfg *Config, mc *modelConfig) *testModel {
	t.Helper()
	m := &testModel{hung: make(chan struct{}, 64), delivered: make(chan webhook.Delivery, 64)}
	m.Server = llmtest.New(t, m.answer)
	// A hanging caller must stay hung until the test is done with it.
	client := openai.New(openai.Config{BaseURL: m.URL, APIKey: "k", Model: "m", FirstTokenTimeout: time.Minute})
	r := cfg.TestSuites.Runner
	r.Judge = eval.Judge{LLM: client}
	r.Chats = &pipeline.Engine{LLM: client, Store: cfg.Store, Logger: cfg.Logger}
	r.Webhooks, r.Secret = m, cfg.Orgs.WebhookSecret
	r.Node, r.Poll, r.Logger = "test", 10*time.Millisecond, cfg.Logger
	if mc.calls {
		r.Calls = cfg.Queue
	}
	cfg.TestSuites.Generator = eval.Generator{LLM: client}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	t.Cleanup(func() { // before the fake closes: it was started first
		stop()
		<-done
	})
	return m
}

// Deliver records a test_run.completed delivery as received.
func (m *testModel) Deliver(_ context.Context, d webhook.Delivery) webhook.Result {
	select {
	case m.delivered <- d:
	default:
	}
	return webhook.Result{ID: "d", Sent: true, StatusCode: 200}
}

func (m *testModel) answer(req llmtest.Request) llmtest.Reply {
	if rf, ok := req.Body["response_format"].(map[string]any); ok {
		schema, _ := rf["json_schema"].(map[string]any)
		if schema["name"] == "verdict" {
			return m.verdict(allContent(req))
		}
		return llmtest.Reply{Text: []string{generatedTests}}
	}
	if system, _ := firstContent(req); strings.HasPrefix(system, callerPromptStart) {
		return m.caller(req, system)
	}
	return llmtest.Reply{Text: []string{"Certainly, for what time?"}}
}

// caller opens with a request, then says goodbye and hangs up.
func (m *testModel) caller(req llmtest.Request, system string) llmtest.Reply {
	if strings.Contains(system, scriptHang) {
		m.hung <- struct{}{}
		return llmtest.Reply{Hang: true}
	}
	for _, msg := range req.Messages[1:] {
		if msg["role"] == "assistant" { // it has spoken before
			return llmtest.Reply{Text: []string{"Eight, thanks. Goodbye."},
				ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
		}
	}
	return llmtest.Reply{Text: []string{"Hi, I would like a table for two tonight."}}
}

func (m *testModel) verdict(content string) llmtest.Reply {
	passed := true
	switch {
	case strings.Contains(content, verdictMalformed):
		return llmtest.Reply{Text: []string{"I think it went well."}}
	case strings.Contains(content, verdictFail):
		passed = false
	case strings.Contains(content, verdictFlaky):
		passed = m.flaky.Add(1)%2 == 1
	}
	b, _ := json.Marshal(map[string]any{"passed": passed, "reasoning": "The agent asked for the time."})
	return llmtest.Reply{Text: []string{string(b)}}
}

// judgeRequests counts the judge's requests whose rubric holds marker.
func (m *testModel) judgeRequests(marker string) int {
	n := 0
	for _, req := range m.Requests() {
		if _, ok := req.Body["response_format"]; ok && strings.Contains(allContent(req), marker) {
			n++
		}
	}
	return n
}

// generatorRequests are the generator's requests, in order.
func (m *testModel) generatorRequests() []llmtest.Request {
	var out []llmtest.Request
	for _, req := range m.Requests() {
		if rf, ok := req.Body["response_format"].(map[string]any); ok {
			if schema, _ := rf["json_schema"].(map[string]any); schema["name"] != "verdict" {
				out = append(out, req)
			}
		}
	}
	return out
}

func firstContent(req llmtest.Request) (string, bool) {
	if len(req.Messages) == 0 {
		return "", false
	}
	s, ok := req.Messages[0]["content"].(string)
	return s, ok
}

func allContent(req llmtest.Request) string {
	var b strings.Builder
	for _, msg := range req.Messages {
		if s, ok := msg["content"].(string); ok {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
