package pipeline

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/webhook"
)

// A model's tool arguments that give a key twice are refused as arguments
// that do not parse: the transcript keeps them as written, so acting on
// the last of the keys would act on something the record does not say.
func TestToolArgumentsWithDuplicateKeys(t *testing.T) {
	if d, bad := digitsArg(`{"digits":"1","digits":"2"}`); d != "" || bad == "" {
		t.Errorf("press_digit: %q, %q", d, bad)
	}
	if d, bad := digitsArg(`{"digits":"12#"}`); d != "12#" || bad != "" {
		t.Errorf("press_digit, keys once: %q, %q", d, bad)
	}
	if b, bad := messageArg(`{"body":"Your code is 1234","b\u006fdy":"hi"}`); b != "" || bad == "" {
		t.Errorf("send_message: %q, %q", b, bad)
	}
	s := &agentSide{agent: model.AgentConfig{TransferRoutes: []model.TransferRoute{
		{ToNumber: "+14155550100", Condition: "billing"}, {ToNumber: "+14155550101", Condition: "sales"}}}}
	if to, bad := s.transferArg(`{"to_number":"+14155550100","to_number":"+14155550101"}`); to != "" || bad == "" {
		t.Errorf("transfer_to_number: %q, %q", to, bad)
	}
	if to, bad := s.transferArg(`{"to_number":"+14155550101"}`); to != "+14155550101" || bad != "" {
		t.Errorf("transfer_to_number, keys once: %q, %q", to, bad)
	}
	offered := []choice{{target: "a"}, {target: "b"}}
	calls := func(args string) []llm.ToolCall { return []llm.ToolCall{{Name: toolTransition, Arguments: args}} }
	if got := transitionTarget(calls(`{"target":"a","target":"b"}`), offered); got != "" {
		t.Errorf("flow_transition: %q", got)
	}
	if got := transitionTarget(calls(`{"target":"b"}`), offered); got != "b" {
		t.Errorf("flow_transition, keys once: %q", got)
	}
}

// A custom tool's arguments that give a key twice are not sent to the
// customer's endpoint; the model is told which key, so it can call again.
func TestChatCustomToolArgumentsWithDuplicateKeys(t *testing.T) {
	t.Parallel()
	recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, "booked") })
	b := newBench(t)
	b.addTool(t, model.CustomTool{Name: "book", WebhookURL: recv.URL})
	m := newChatModel(t, callerScript("A table for two, please.", "Bye!"),
		func(_ int, req llmtest.Request) llmtest.Reply {
			if last := req.Messages[len(req.Messages)-1]; last["role"] == "tool" {
				return says("Something went wrong.")
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "t1", Name: "book",
				Arguments: `{"date":"2026-12-24","party":{"size":2,"size":20}}`}}}
		})
	e := &Engine{LLM: m.llm, Store: b.st, Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
	if _, err := e.Chat(context.Background(), chatWith(b, nil)); err != nil {
		t.Fatal(err)
	}
	_, agents := m.requests()
	if len(agents) < 2 {
		t.Fatalf("%d agent requests", len(agents))
	}
	result := roles(agents[1].Messages)
	last := result[len(result)-1]
	if !strings.HasPrefix(last, "tool:error: ") || !strings.Contains(last, "party.size: duplicate key") {
		t.Errorf("the model was given %q", last)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.reqs) != 0 {
		t.Errorf("%d requests reached the tool: %q", len(recv.reqs), recv.body)
	}
}

// In a flow, a tool's answer that gives a key twice is kept as the text it
// is, not as the object either reading makes of it; a model's extraction
// that gives a key twice is no answer, as one that does not parse.
func TestFlowDuplicateKeys(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, toolAnswer string, agent func(llmtest.Request) llmtest.Reply) (ChatResult, *toolReceiver) {
		recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, toolAnswer) })
		b := flowBench(t, recv.URL)
		m := newChatModel(t, callerScript("I want to book a cleaning.", "I am forty two.", "Thanks, bye."),
			func(_ int, req llmtest.Request) llmtest.Reply { return agent(req) })
		e := &Engine{LLM: m.llm, Store: b.st, Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
		res, err := e.Chat(t.Context(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		return res, recv
	}
	t.Run("a tool's answer", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		var seen []llmtest.Request
		res, _ := run(t, `{"reference":"AB12","reference":"ZZ99"}`, flowModel(t, 42, &seen, &mu))
		last, _ := res.Transcript[len(res.Transcript)-1]["text"].(string)
		if !strings.HasPrefix(last, "You are booked") || strings.Contains(last, "AB12") || strings.Contains(last, "ZZ99") {
			t.Errorf("last entry %q", last)
		}
	})
	t.Run("a model's extraction", func(t *testing.T) {
		t.Parallel()
		var mu sync.Mutex
		var seen []llmtest.Request
		inner := flowModel(t, 42, &seen, &mu)
		res, recv := run(t, `{"reference":"AB12"}`, func(r llmtest.Request) llmtest.Reply {
			if schema, _ := r.ResponseFormat["json_schema"].(map[string]any); schema["name"] == "flow_extract" {
				return llmtest.Reply{Text: []string{`{"age":42,"age":12}`}}
			}
			return inner(r)
		})
		if got := strings.Join(path(model.Call{Transcript: res.Transcript}), " "); !strings.Contains(got, "get_age>qualify(always)") || strings.Contains(got, "book") {
			t.Errorf("path %s", got)
		}
		recv.mu.Lock()
		defer recv.mu.Unlock()
		if len(recv.body) != 0 {
			t.Errorf("the booking tool was called: %q", recv.body)
		}
	})
}
