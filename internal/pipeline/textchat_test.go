package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/webhook"
)

const testCallerPrompt = "You are Ada. You call to book a table for two tonight, then say goodbye and hang up."

// chatModel is the fake model of a text chat, through the real openai
// client: requests under testCallerPrompt are the simulated caller's,
// answered by caller; the others the agent's, answered by agent. Each
// script gets its side's request number (from 0).
type chatModel struct {
	srv *llmtest.Server
	llm *openai.Client

	mu              sync.Mutex
	callers, agents []llmtest.Request
}

func newChatModel(t *testing.T, caller, agent func(n int, req llmtest.Request) llmtest.Reply) *chatModel {
	t.Helper()
	m := &chatModel{}
	m.srv = llmtest.New(t, func(req llmtest.Request) llmtest.Reply {
		m.mu.Lock()
		isCaller := len(req.Messages) > 0 && req.Messages[0]["content"] == testCallerPrompt
		var n int
		if isCaller {
			n, m.callers = len(m.callers), append(m.callers, req)
		} else {
			n, m.agents = len(m.agents), append(m.agents, req)
		}
		m.mu.Unlock()
		if isCaller {
			return caller(n, req)
		}
		return agent(n, req)
	})
	m.llm = openai.New(openai.Config{BaseURL: m.srv.URL, APIKey: "sk-test-0123456789abcdef", Model: "m", FirstTokenTimeout: 30 * time.Second, MaxRetries: -1})
	return m
}

func (m *chatModel) requests() (callers, agents []llmtest.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.callers), slices.Clone(m.agents)
}

// says answers with text.
func says(text string) llmtest.Reply { return llmtest.Reply{Text: []string{text}} }

// hangsUp says text and calls end_call.
func hangsUp(text string) llmtest.Reply {
	return llmtest.Reply{Text: []string{text}, ToolCalls: []llmtest.ToolCallReply{{ID: "bye", Name: "end_call", Arguments: "{}"}}}
}

// callerScript says lines in order and hangs up with the last.
func callerScript(lines ...string) func(int, llmtest.Request) llmtest.Reply {
	return func(n int, _ llmtest.Request) llmtest.Reply {
		if n >= len(lines)-1 {
			return hangsUp(lines[len(lines)-1])
		}
		return says(lines[n])
	}
}

// chatWith is a text chat with the bench's agent, its stand-in call built
// by ChatCall.
func chatWith(b bench, vars map[string]any) Chat {
	return Chat{Agent: b.agent, Call: ChatCall(b.agent, "+15550001111", "+15550002222", vars, time.Now()), CallerPrompt: testCallerPrompt}
}

// roles is each message's role and content, "role:content".
func roles(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		c, _ := m["content"].(string)
		out = append(out, m["role"].(string)+":"+c)
	}
	return out
}

func toolNames(req llmtest.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t["function"].(map[string]any)["name"].(string))
	}
	return out
}

func chatTexts(r ChatResult) []string { return texts(model.Call{Transcript: r.Transcript}) }

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestChatCallerHangsUpAfterThreeTurns(t *testing.T) {
	t.Parallel()
	temp, effort := 0.3, "low"
	b := newBench(t, func(a *model.Agent) {
		a.Config.PromptTemplate = "You take bookings at {{venue}} for {{user_number}}."
		a.Config.DefaultVariables = map[string]any{"venue": "Chez Nous"}
		a.Config.LLMTemperature, a.Config.LLMReasoningEffort = &temp, &effort
	})
	m := newChatModel(t, callerScript("I'd like a table for two tonight.", "At eight, please.", "Perfect, thank you. Goodbye!"),
		func(n int, _ llmtest.Request) llmtest.Reply {
			return says([]string{"Certainly, at what time?", "Booked for eight."}[n])
		})
	e := &Engine{LLM: m.llm, Store: b.st}
	res, err := e.Chat(context.Background(), chatWith(b, map[string]any{"venue": "Luigi's"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.EndCause != call.CauseEndCallTool || res.EndedBy != EndedByCaller {
		t.Errorf("ended %q by %q", res.EndCause, res.EndedBy)
	}
	sameList(t, "transcript", chatTexts(res), []string{
		"assistant:Hello, this is Parley.",
		"user:I'd like a table for two tonight.",
		"assistant:Certainly, at what time?",
		"user:At eight, please.",
		"assistant:Booked for eight.",
		"user:Perfect, thank you. Goodbye!",
	})
	for i, e := range res.Transcript {
		if want := []string{"turn-0", "turn-1", "turn-1", "turn-2", "turn-2", "turn-3"}[i]; e["turnId"] != want || e["seq"] != i {
			t.Errorf("entry %d: turnId %v seq %v", i, e["turnId"], e["seq"])
		}
	}

	callers, agents := m.requests()
	if len(callers) != 3 || len(agents) != 2 {
		t.Fatalf("%d caller and %d agent requests", len(callers), len(agents))
	}
	// The agent is asked as on a call: its rendered prompt (the case's
	// variables over its defaults, the system ones), its settings and tools.
	prompt := systemPrompt(model.Call{Prompt: "You take bookings at Luigi's for +15550001111.", Direction: model.Inbound}, b.agent)
	sameList(t, "the agent's last request", roles(agents[1].Messages), []string{
		"system:" + prompt,
		"assistant:Hello, this is Parley.",
		"user:I'd like a table for two tonight.",
		"assistant:Certainly, at what time?",
		"user:At eight, please.",
	})
	if r := agents[0]; r.Temperature == nil || *r.Temperature != 0.3 || r.ReasoningEffort != "low" || !slices.Equal(toolNames(r), []string{"end_call"}) {
		t.Errorf("agent request: temperature %v, effort %q, tools %v", r.Temperature, r.ReasoningEffort, toolNames(r))
	}
	// The caller sees the chat from its side, and may only hang up.
	sameList(t, "the caller's last request", roles(callers[2].Messages), []string{
		"system:" + testCallerPrompt,
		"user:Hello, this is Parley.",
		"assistant:I'd like a table for two tonight.",
		"user:Certainly, at what time?",
		"assistant:At eight, please.",
		"user:Booked for eight.",
	})
	if r := callers[0]; !slices.Equal(toolNames(r), []string{"end_call"}) || r.Temperature != nil || r.ReasoningEffort != "" {
		t.Errorf("caller request: tools %v, temperature %v, effort %q", toolNames(r), r.Temperature, r.ReasoningEffort)
	}
	if res.Metrics["llm_prompt_tokens"].(int) == 0 {
		t.Errorf("metrics %v", res.Metrics)
	}
}

func TestChatAgentEndsWithEndCall(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	m := newChatModel(t, callerScript("I would like a table for two tonight.", "unused"),
		func(int, llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: []string{"Sure, your table ", "for two is booked. ", "Goodbye!"},
				ToolCalls: []llmtest.ToolCallReply{{ID: "call_1", Name: "end_call", Arguments: "{}"}}}
		})
	res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.EndCause != call.CauseEndCallTool || res.EndedBy != EndedByAgent {
		t.Errorf("ended %q by %q", res.EndCause, res.EndedBy)
	}
	// As TestAConversationTurnEndsWithEndCall's call has it.
	sameList(t, "transcript", chatTexts(res), []string{
		"assistant:Hello, this is Parley.",
		"user:I would like a table for two tonight.",
		"assistant:Sure, your table for two is booked. Goodbye!",
		"tool:map[args:{} name:end_call]",
	})
	if last := res.Transcript[3]; str(last["result"]) != "map[output:the call is ending]" || last["turnId"] != "turn-1" {
		t.Errorf("tool entry %v", last)
	}
	if callers, agents := m.requests(); len(callers) != 1 || len(agents) != 1 {
		t.Errorf("%d caller and %d agent requests", len(callers), len(agents))
	}
}

func TestChatCustomTool(t *testing.T) {
	t.Parallel()
	recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, `{"slots":["19:00","20:30"]}`) })
	b := newBench(t)
	b.addTool(t, model.CustomTool{Name: "check_availability", WebhookURL: recv.URL + "/tools?fixed=1",
		Schema:      map[string]any{"type": "object", "properties": map[string]any{"date": map[string]any{"type": "string"}}},
		Headers:     []model.KeyValue{{Key: "Authorization", Value: "Bearer tool-secret"}},
		QueryParams: []model.KeyValue{{Key: "venue", Value: "luigi"}}})
	m := newChatModel(t, callerScript("Anything free on Christmas Eve?", "Great, bye!"),
		func(_ int, req llmtest.Request) llmtest.Reply {
			if last := req.Messages[len(req.Messages)-1]; last["role"] == "tool" {
				return says("We have 19:00 or 20:30.")
			}
			return llmtest.Reply{Text: []string{"Let me check."},
				ToolCalls: []llmtest.ToolCallReply{{ID: "t1", Name: "check_availability", Arguments: `{"date":"2026-12-24"}`}}}
		})
	e := &Engine{LLM: m.llm, Store: b.st, Webhooks: webhook.New(webhook.Options{AllowPrivate: true}),
		Secret: func(context.Context, string) (string, error) { return "whsec_test", nil }}
	res, err := e.Chat(context.Background(), chatWith(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	sameList(t, "transcript", chatTexts(res), []string{
		"assistant:Hello, this is Parley.",
		"user:Anything free on Christmas Eve?",
		"assistant:Let me check.",
		`tool:map[args:{"date":"2026-12-24"} name:check_availability]`,
		"assistant:We have 19:00 or 20:30.",
		"user:Great, bye!",
	})
	if entry := res.Transcript[3]; str(entry["result"]) != `map[output:{"slots":["19:00","20:30"]}]` || entry["turnId"] != "turn-1" {
		t.Errorf("tool entry %v", entry)
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.reqs) != 1 {
		t.Fatalf("%d tool requests", len(recv.reqs))
	}
	req, body := recv.reqs[0], recv.body[0]
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	// No call record exists: callId is null, present, never "".
	if v, ok := got["callId"]; !ok || v != nil {
		t.Errorf("callId %v (present %v): %s", v, ok, body)
	}
	if got["event"] != "custom_tool" || got["agentId"] != b.agent.ID || got["tool"] != "check_availability" ||
		str(got["args"]) != "map[date:2026-12-24]" || len(got) != 5 {
		t.Errorf("body %s", body)
	}
	if req.Method != "POST" || req.URL.Path != "/tools" || req.URL.Query().Get("fixed") != "1" || req.URL.Query().Get("venue") != "luigi" {
		t.Errorf("request %s %s", req.Method, req.URL)
	}
	if req.Header.Get("Authorization") != "Bearer tool-secret" || req.Header.Get("X-Parley-Event") != "custom_tool" {
		t.Errorf("headers %v", req.Header)
	}
	if err := webhook.Verify("whsec_test", req.Header.Get("X-Parley-Signature"), body, time.Now(), time.Minute); err != nil {
		t.Errorf("signature: %v", err)
	}
	// The model was given the response as the tool's result.
	_, agents := m.requests()
	sameList(t, "the agent's request after the tool", roles(agents[1].Messages)[3:], []string{
		"assistant:Let me check.",
		`tool:{"slots":["19:00","20:30"]}`,
	})
}

// noMessages is a Messenger that fails the test if a text is sent.
type noMessages struct{ t *testing.T }

func (m noMessages) SendFromCall(context.Context, model.Call, string) (model.Message, error) {
	m.t.Error("a text chat sent a text message")
	return model.Message{}, errors.New("not in a text chat")
}

func TestChatLineToolsAreNotCarriedOut(t *testing.T) {
	t.Parallel()
	yes := true
	withLineTools := func(a *model.Agent) {
		a.Config.PlayKeypadTouchToneEnabled, a.Config.TransferEnabled = &yes, &yes
		a.Config.TransferRoutes = []model.TransferRoute{{ToNumber: "+15550009999", Condition: "the caller asks for a manager"}}
		a.Config.MessagingConfig = &model.MessagingConfig{SendMessageEnabled: &yes}
	}
	t.Run("keys and texts are recorded, not sent, and the chat goes on", func(t *testing.T) {
		b := newBench(t, withLineTools)
		m := newChatModel(t, callerScript("Text me the address and press one.", "Thanks, bye."),
			func(_ int, req llmtest.Request) llmtest.Reply {
				if req.Messages[len(req.Messages)-1]["role"] == "tool" {
					return says("Done.")
				}
				return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{
					{ID: "m", Name: "send_message", Arguments: `{"body":"12 Main St"}`},
					{ID: "d", Name: "press_digit", Arguments: `{"digits":"1"}`}}}
			})
		res, err := (&Engine{LLM: m.llm, Store: b.st, Messages: noMessages{t}}).Chat(context.Background(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		sameList(t, "transcript", chatTexts(res), []string{
			"assistant:Hello, this is Parley.",
			"user:Text me the address and press one.",
			`tool:map[args:{"body":"12 Main St"} name:send_message]`,
			`tool:map[args:{"digits":"1"} name:press_digit]`,
			"assistant:Done.",
			"user:Thanks, bye.",
		})
		for _, e := range res.Transcript[2:4] {
			if str(e["result"]) != "map[output:"+notSent+"]" {
				t.Errorf("entry %v", e)
			}
		}
		_, agents := m.requests()
		sameList(t, "tools offered", toolNames(agents[0]), []string{"end_call", "transfer_to_number", "press_digit", "send_message"})
		if res.EndCause != call.CauseEndCallTool || res.EndedBy != EndedByCaller {
			t.Errorf("ended %q by %q", res.EndCause, res.EndedBy)
		}
	})
	t.Run("a transfer is recorded and ends the chat TRANSFERRED", func(t *testing.T) {
		b := newBench(t, withLineTools)
		m := newChatModel(t, callerScript("I want the manager.", "unused"),
			func(int, llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: []string{"Transferring you now."},
					ToolCalls: []llmtest.ToolCallReply{{ID: "x", Name: "transfer_to_number", Arguments: `{"to_number":"+15550009999"}`}}}
			})
		res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		if res.EndCause != call.CauseTransferred || res.EndedBy != EndedByAgent {
			t.Errorf("ended %q by %q", res.EndCause, res.EndedBy)
		}
		last := res.Transcript[len(res.Transcript)-1]
		if str(last["tool"]) != `map[args:{"to_number":"+15550009999"} name:transfer_to_number]` ||
			!strings.Contains(str(last["result"]), "text-only test") {
			t.Errorf("entry %v", last)
		}
		if _, agents := m.requests(); len(agents) != 1 {
			t.Errorf("%d agent requests after the transfer", len(agents))
		}
	})
}

func TestChatOpening(t *testing.T) {
	t.Parallel()
	t.Run("static: the rendered first message", func(t *testing.T) {
		greeting := "Hi {{name}}, Luigi's here."
		b := newBench(t, func(a *model.Agent) { a.Config.FirstMessage = &greeting })
		m := newChatModel(t, callerScript("Bye."), func(int, llmtest.Request) llmtest.Reply { return says("unused") })
		res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, map[string]any{"name": "Ada"}))
		if err != nil {
			t.Fatal(err)
		}
		sameList(t, "transcript", chatTexts(res), []string{"assistant:Hi Ada, Luigi's here.", "user:Bye."})
		if _, agents := m.requests(); len(agents) != 0 {
			t.Errorf("the model was asked for a static greeting")
		}
	})
	t.Run("dynamic: the model greets", func(t *testing.T) {
		dynamic := "dynamic"
		b := newBench(t, func(a *model.Agent) { a.Config.FirstMessageMode = &dynamic })
		m := newChatModel(t, callerScript("Bye."), func(int, llmtest.Request) llmtest.Reply { return says("Good evening, Luigi's.") })
		res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		sameList(t, "transcript", chatTexts(res), []string{"assistant:Good evening, Luigi's.", "user:Bye."})
		if res.Transcript[0]["turnId"] != "turn-0" {
			t.Errorf("greeting %v", res.Transcript[0])
		}
		callers, agents := m.requests()
		if len(agents) != 1 || roles(agents[0].Messages)[1] != "user:(The inbound call has just been answered. Greet the caller.)" {
			t.Fatalf("agent requests %d: %v", len(agents), agents)
		}
		sameList(t, "the caller's request", roles(callers[0].Messages), []string{"system:" + testCallerPrompt, "user:Good evening, Luigi's."})
	})
	t.Run("none: the caller speaks first", func(t *testing.T) {
		b := newBench(t, func(a *model.Agent) { a.Config.FirstMessage = nil })
		m := newChatModel(t, callerScript("Hello? Is this Luigi's?", "Bye."), func(int, llmtest.Request) llmtest.Reply { return says("It is.") })
		res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		sameList(t, "transcript", chatTexts(res), []string{"user:Hello? Is this Luigi's?", "assistant:It is.", "user:Bye."})
		callers, _ := m.requests()
		sameList(t, "the caller's first request", roles(callers[0].Messages), []string{"system:" + testCallerPrompt, "user:" + callerGoesFirst})
	})
}

func TestChatMaxTurns(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	m := newChatModel(t, func(int, llmtest.Request) llmtest.Reply { return says("And another thing.") },
		func(int, llmtest.Request) llmtest.Reply { return says("Go on.") })
	c := chatWith(b, nil)
	c.MaxTurns = 3
	res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.EndCause != ChatMaxTurns || res.EndedBy != "" {
		t.Errorf("ended %q by %q", res.EndCause, res.EndedBy)
	}
	// The agent answers the last turn; the caller gets no fourth.
	if callers, agents := m.requests(); len(callers) != 3 || len(agents) != 3 || len(res.Transcript) != 7 {
		t.Errorf("%d caller and %d agent requests, %d entries", len(callers), len(agents), len(res.Transcript))
	}
}

func TestChatCallerWithNothingToSay(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	m := newChatModel(t, func(int, llmtest.Request) llmtest.Reply { return llmtest.Reply{} },
		func(int, llmtest.Request) llmtest.Reply { return says("unused") })
	res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.EndCause != call.CauseSilenceTimeout || res.EndedBy != EndedByCaller || len(res.Transcript) != 1 {
		t.Errorf("ended %q by %q: %q", res.EndCause, res.EndedBy, chatTexts(res))
	}
}

func TestChatProviderErrors(t *testing.T) {
	t.Parallel()
	t.Run("the agent's model", func(t *testing.T) {
		b := newBench(t)
		m := newChatModel(t, callerScript("Hello?", "Bye."),
			func(int, llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Status: http.StatusServiceUnavailable, Message: "overloaded"}
			})
		res, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
		if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "agent under test") || !strings.Contains(err.Error(), "overloaded") {
			t.Fatalf("err %v", err)
		}
		// What was said before the failure comes back with it.
		sameList(t, "transcript", chatTexts(res), []string{"assistant:Hello, this is Parley.", "user:Hello?"})
	})
	t.Run("the caller's model", func(t *testing.T) {
		b := newBench(t)
		m := newChatModel(t, func(int, llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Status: http.StatusUnauthorized, Message: "bad key"}
		},
			func(int, llmtest.Request) llmtest.Reply { return says("unused") })
		_, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(context.Background(), chatWith(b, nil))
		if !errors.Is(err, llm.ErrRejected) || !strings.Contains(err.Error(), "simulated caller") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("no model configured", func(t *testing.T) {
		b := newBench(t)
		if _, err := (&Engine{Store: b.st}).Chat(context.Background(), chatWith(b, nil)); !errors.Is(err, errNoLLM) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestChatStopsWhenCanceled(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	asked := make(chan struct{})
	var once sync.Once
	m := newChatModel(t, callerScript("Hello?", "Bye."), func(int, llmtest.Request) llmtest.Reply {
		once.Do(func() { close(asked) })
		return llmtest.Reply{Hang: true} // until the client goes away
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := (&Engine{LLM: m.llm, Store: b.st}).Chat(ctx, chatWith(b, nil))
		done <- err
	}()
	<-asked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestChatKnowledge(t *testing.T) {
	t.Parallel()
	t.Run("automatic: the chunks for the caller's words reach the agent's request", func(t *testing.T) {
		b := newBench(t)
		k := withKnowledgeBase(t, b)
		m := newChatModel(t, callerScript("Are you open on Monday evenings?", "Bye."),
			func(int, llmtest.Request) llmtest.Reply { return says("We are closed on Mondays.") })
		// The budget is a caller's wait on a quiet machine; this test checks
		// what reaches the model, on a machine that may be loaded.
		res, err := (&Engine{LLM: m.llm, Store: b.st, Knowledge: k, RetrievalBudget: time.Minute}).Chat(context.Background(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		_, agents := m.requests()
		msgs := agents[0].Messages
		note, _ := msgs[len(msgs)-2]["content"].(string)
		if msgs[len(msgs)-2]["role"] != "system" || !strings.Contains(note, "Opening hours: Luigi's is open Tuesday to Sunday") {
			t.Errorf("the message before the caller's is %v", msgs[len(msgs)-2])
		}
		if r, _ := res.Metrics["knowledge_retrievals"].([]map[string]any); len(r) != 1 || !strings.Contains(str(r[0]["query"]), "Monday") {
			t.Errorf("knowledge_retrievals %v", res.Metrics["knowledge_retrievals"])
		}
	})
	t.Run("query_tool: the search is real and a tool entry", func(t *testing.T) {
		mode := "query_tool"
		b := newBench(t, func(a *model.Agent) { a.Config.KnowledgeBaseRetrievalMode = &mode })
		k := withKnowledgeBase(t, b)
		m := newChatModel(t, callerScript("Can I bring wine?", "Bye."), func(_ int, req llmtest.Request) llmtest.Reply {
			if req.Messages[len(req.Messages)-1]["role"] == "tool" {
				return says("Yes, corkage is 15 dollars.")
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "s", Name: "search_knowledge_base", Arguments: `{"query":"corkage wine"}`}}}
		})
		res, err := (&Engine{LLM: m.llm, Store: b.st, Knowledge: k}).Chat(context.Background(), chatWith(b, nil))
		if err != nil {
			t.Fatal(err)
		}
		entry := res.Transcript[2]
		if str(entry["tool"]) != `map[args:{"query":"corkage wine"} name:search_knowledge_base]` ||
			!strings.Contains(str(entry["result"]), "Corkage: Guests may bring their own wine") {
			t.Errorf("entry %v", entry)
		}
	})
}

// TestChatEntriesAreACallsEntries compares a text chat's entries, key for
// key, with those a call's transcript log writes to the store.
func TestChatEntriesAreACallsEntries(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	log := &transcriptLog{t: call.NewTranscript(b.st, b.call, time.Now()), log: (&Engine{}).log()}
	log.assistant("turn-0", "Hello.", time.Time{})
	log.user("turn-1", "Hi.", "en", span{})
	log.tool("turn-1", llm.ToolCall{ID: "x", Name: "lookup", Arguments: "{}"}, "found")
	log.flush()
	stored := b.stored(t).Transcript
	if len(stored) != 3 {
		t.Fatalf("stored %v", stored)
	}

	recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, "found") })
	b.addTool(t, model.CustomTool{Name: "lookup", WebhookURL: recv.URL})
	m := newChatModel(t, callerScript("Hi.", "Bye."), func(_ int, req llmtest.Request) llmtest.Reply {
		if req.Messages[len(req.Messages)-1]["role"] == "tool" {
			return says("Found it.")
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "x", Name: "lookup", Arguments: "{}"}}}
	})
	res, err := (&Engine{LLM: m.llm, Store: b.st, Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}).Chat(context.Background(), chatWith(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	// JSON, as the attempt's record will hold it.
	raw, err := json.Marshal(res.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	var chat []map[string]any
	if err := json.Unmarshal(raw, &chat); err != nil {
		t.Fatal(err)
	}
	keys := func(e map[string]any) string { return strings.Join(slices.Sorted(maps.Keys(e)), ",") }
	want := map[string]string{}
	for _, e := range stored {
		want[e["role"].(string)] = keys(e)
	}
	seen := map[string]bool{}
	for _, e := range chat {
		role := e["role"].(string)
		seen[role] = true
		if keys(e) != want[role] {
			t.Errorf("a chat's %s entry has %s, a call's %s", role, keys(e), want[role])
		}
		if _, ok := e["at"].(float64); !ok {
			t.Errorf("at %v", e["at"])
		}
		if role == "tool" && keys(e["tool"].(map[string]any)) != keys(stored[2]["tool"].(map[string]any)) ||
			role == "tool" && keys(e["result"].(map[string]any)) != keys(stored[2]["result"].(map[string]any)) {
			t.Errorf("tool entry %v, a call's %v", e, stored[2])
		}
	}
	if len(seen) != 3 {
		t.Errorf("the chat had entries of %v", seen)
	}
}

func TestChatCall(t *testing.T) {
	t.Parallel()
	greeting := "Hello {{name}}, calling {{agent_number}}?"
	b := newBench(t, func(a *model.Agent) {
		a.Config.PromptTemplate = "Serve {{name}} ({{direction}}, {{user_number}}), plan {{plan}}."
		a.Config.FirstMessage = &greeting
		a.Config.DefaultVariables = map[string]any{"name": "guest", "plan": "basic"}
	})
	c := ChatCall(b.agent, "+15550001111", "+15550002222", map[string]any{"name": "Ada"}, time.Now())
	if c.ID != "" || c.OrgID != b.agent.OrgID || c.AgentID != b.agent.ID || c.Direction != model.Inbound ||
		c.FromNumber != "+15550001111" || c.ToNumber != "+15550002222" {
		t.Errorf("call %+v", c)
	}
	if c.Prompt != "Serve Ada (inbound, +15550001111), plan basic." || c.FirstMessage == nil || *c.FirstMessage != "Hello Ada, calling +15550002222?" {
		t.Errorf("prompt %q, first message %v", c.Prompt, c.FirstMessage)
	}
}
