package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/webhook"
)

// dentalFlow is the flow the tests run: greet → qualify → get_age →
// book (a custom tool) → done, or guardian (a transfer) for a minor, or
// back to qualify when no age was heard; human is a global transfer.
const dentalFlow = `{"globalPrompt":"You are Ava at Acme Dental.","startNodeId":"greet","nodes":[
 {"id":"greet","type":"conversation","staticText":"Acme Dental, how can I help?","instruction":"Find out what the caller needs.",
  "edges":[{"condition":"The caller wants to book an appointment","target":"qualify"}]},
 {"id":"qualify","type":"conversation","instruction":"Ask how old the caller is.","edges":[{"target":"get_age"}]},
 {"id":"get_age","type":"extract","variables":[{"name":"age","type":"integer","description":"the caller's age in years"}],
  "edges":[{"expression":"{{age}} >= 18","target":"book"},{"expression":"{{age}} < 18","target":"guardian"},{"target":"qualify"}]},
 {"id":"book","type":"tool","tool":"book_appointment","arguments":{"age":"{{age}}","phone":"{{user_number}}"},"resultVariable":"booking",
  "edges":[{"target":"done"}]},
 {"id":"done","type":"end","text":"You are booked, reference {{booking.reference}}. Goodbye."},
 {"id":"guardian","type":"transfer","toNumber":"+15550009999","text":"Let me get a parent or guardian on the line."},
 {"id":"human","type":"transfer","toNumber":"+15550008888","global":{"condition":"The caller asks to speak to a person"}}
]}`

// flowModel is a fake model for dentalFlow: it moves greet → qualify,
// asks the age in qualify, extracts age (nil: not said), and judges no
// global condition.
func flowModel(t *testing.T, age any, seen *[]llmtest.Request, mu *sync.Mutex) func(llmtest.Request) llmtest.Reply {
	return flowModelJudging(t, age, "none", seen, mu)
}

// flowModelJudging is flowModel whose edge judge answers holds.
func flowModelJudging(t *testing.T, age any, holds string, seen *[]llmtest.Request, mu *sync.Mutex) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		mu.Lock()
		*seen = append(*seen, r)
		mu.Unlock()
		system, _ := r.Messages[0]["content"].(string)
		last := r.Messages[len(r.Messages)-1]
		switch {
		case r.ResponseFormat != nil:
			name, _ := r.ResponseFormat["json_schema"].(map[string]any)["name"].(string)
			if name == "flow_extract" {
				b, _ := json.Marshal(map[string]any{"age": age})
				return llmtest.Reply{Text: []string{string(b)}}
			}
			return llmtest.Reply{Text: []string{`{"holds":"` + holds + `"}`}}
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Text: []string{"A caller phoned the dentist."}}
		case last["role"] == "tool":
			return llmtest.Reply{Text: []string{"Sorry about that."}}
		case strings.Contains(system, "What to do now: Find out"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "go1", Name: "flow_transition", Arguments: `{"target":"qualify"}`}}}
		}
		return llmtest.Reply{Text: []string{"How old are you?"}}
	}
}

func flowBench(t *testing.T, recv string) bench {
	t.Helper()
	var def map[string]any
	if err := json.Unmarshal([]byte(dentalFlow), &def); err != nil {
		t.Fatal(err)
	}
	b := newBench(t, func(a *model.Agent) {
		a.Mode = model.ModeConversationFlow
		a.Config.FlowDefinition = def
	})
	b.addTool(t, model.CustomTool{Name: "book_appointment", WebhookURL: recv})
	return b
}

// flowCall runs dentalFlow with the caller saying lines (a scripted
// recognizer hears them) until the call ends or settles, and returns the
// outcome and the stored record.
func flowCall(t *testing.T, age any, lines []string, until func(model.Call) bool) (call.Outcome, model.Call, []llmtest.Request, *toolReceiver) {
	return flowCallJudging(t, age, "none", lines, until)
}

func flowCallJudging(t *testing.T, age any, holds string, lines []string, until func(model.Call) bool) (call.Outcome, model.Call, []llmtest.Request, *toolReceiver) {
	t.Helper()
	requireSpeech(t)
	t.Parallel() // the recognizer is scripted: the calls wait in real time, not on the CPU
	recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, `{"reference":"AB12","confirmed":true}`) })
	b := flowBench(t, recv.URL)
	var mu sync.Mutex
	var seen []llmtest.Request
	e := &Engine{LLM: fakeLLM(t, flowModelJudging(t, age, holds, &seen, &mu)), STT: &scriptedSTT{texts: lines}, TTS: newEspeak(), Store: b.st,
		Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
	r := start(t, b, e)
	heard := 1
	b.waitEntries(t, 2) // the start entry and the greeting
	for _, line := range lines {
		r.sess.say(callerSays(t, line))
		deadline := time.Now().Add(30 * time.Second)
		for userTurns(b.stored(t)) < heard {
			if time.Now().After(deadline) {
				t.Fatalf("the caller's line %q was not heard: %q", line, texts(b.stored(t)))
			}
			time.Sleep(20 * time.Millisecond)
		}
		heard++
		waitFor(t, "the agent's answer", func() bool { c := b.stored(t); return lastRole(c) != "user" || until(c) })
	}
	waitFor(t, "the call to settle", func() bool { return until(b.stored(t)) })
	r.sess.hangup()
	<-r.done
	mu.Lock()
	defer mu.Unlock()
	return r.out, b.ended(t, r.out), seen, recv
}

func userTurns(c model.Call) int {
	n := 0
	for _, e := range c.Transcript {
		if e["role"] == "user" {
			n++
		}
	}
	return n
}

func lastRole(c model.Call) string {
	if len(c.Transcript) == 0 {
		return ""
	}
	return c.Transcript[len(c.Transcript)-1]["role"].(string)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// path is the flow's transitions in the transcript, "from>to(reason)".
func path(c model.Call) []string {
	var out []string
	for _, e := range c.Transcript {
		tool, _ := e["tool"].(map[string]any)
		if tool["name"] != entryTransition {
			continue
		}
		var a map[string]string
		json.Unmarshal([]byte(tool["args"].(string)), &a)
		out = append(out, a["from"]+">"+a["to"]+"("+a["reason"]+")")
	}
	return out
}

func hasEntry(c model.Call, name string) map[string]any {
	for _, e := range c.Transcript {
		if tool, _ := e["tool"].(map[string]any); tool["name"] == name {
			return e
		}
	}
	return nil
}

func TestFlowAdultBooks(t *testing.T) {
	ended := func(c model.Call) bool { return hasEntry(c, "book_appointment") != nil && lastRole(c) == "assistant" }
	out, c, seen, recv := flowCall(t, 42, []string{"I want to book a cleaning", "I am forty two"}, ended)
	want := ">greet(start) greet>qualify(condition) qualify>get_age(always) get_age>book(expression) book>done(always)"
	if got := strings.Join(path(c), " "); got != want {
		t.Errorf("path %s\nwant %s\n%q", got, want, texts(c))
	}
	if out.HangupCause != call.CauseEndCallTool {
		t.Errorf("ended %q %q", out.HangupCause, out.ErrorMessage)
	}
	if last := c.Transcript[len(c.Transcript)-1]; last["text"] != "You are booked, reference AB12. Goodbye." {
		t.Errorf("closing line %v", last)
	}
	if e := hasEntry(c, entryExtract); e == nil || e["result"].(map[string]any)["output"] != `{"age":42}` {
		t.Errorf("extract entry %v", e)
	}
	// The tool was called with its arguments filled in, age a number.
	recv.mu.Lock()
	var body map[string]any
	json.Unmarshal(recv.body[0], &body)
	recv.mu.Unlock()
	if args := body["args"].(map[string]any); args["age"] != 42.0 || args["phone"] != str(c.Variables["user_number"]) {
		t.Errorf("tool args %v", args)
	}
	if out.Variables["age"] != int64(42) || out.Variables["booking.reference"] != "AB12" {
		t.Errorf("outcome variables %v", out.Variables)
	}
	fl, _ := c.Metrics["flow"].(map[string]any)
	visited, _ := json.Marshal(fl["nodesVisited"])
	if string(visited) != `["greet","qualify","get_age","book","done"]` {
		t.Errorf("nodesVisited %s", visited)
	}
	turns, _ := fl["turns"].([]any)
	if len(turns) != 2 {
		t.Fatalf("flow turns %v", fl["turns"])
	}
	for _, tr := range turns {
		if ms, ok := tr.(map[string]any)["decisionMs"].(float64); !ok || ms < 0 {
			t.Errorf("turn %v", tr)
		}
	}
	// The qualify node's request: its instruction in the prompt, the
	// global prompt before it, flow_transition offering the global node.
	var qualify *llmtest.Request
	for i, r := range seen {
		if s, _ := r.Messages[0]["content"].(string); strings.Contains(s, "What to do now: Ask how old") {
			qualify = &seen[i]
		}
	}
	if qualify == nil {
		t.Fatal("no request in the qualify node")
	}
	sys := qualify.Messages[0]["content"].(string)
	if !strings.Contains(sys, "You are Ava at Acme Dental.\n\nWhat to do now: Ask how old") {
		t.Errorf("qualify prompt %q", sys)
	}
	var offered string
	for _, tool := range qualify.Tools {
		if fn := tool["function"].(map[string]any); fn["name"] == "flow_transition" {
			offered = str(fn["parameters"])
		}
	}
	if !strings.Contains(offered, "human") || strings.Contains(offered, "get_age") {
		t.Errorf("flow_transition in qualify: %s", offered)
	}
}

func TestFlowNoAgeGoesBackToQualify(t *testing.T) {
	asked := func(c model.Call) bool { return strings.Contains(strings.Join(path(c), " "), "get_age>qualify") }
	_, c, _, recv := flowCall(t, nil, []string{"I want to book a cleaning", "I would rather not say"}, asked)
	if got := strings.Join(path(c), " "); !strings.HasSuffix(got, "qualify>get_age(always) get_age>qualify(always)") {
		t.Errorf("path %s", got)
	}
	if e := hasEntry(c, entryExtract); e == nil || e["result"].(map[string]any)["output"] != `{}` {
		t.Errorf("extract entry %v", e)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.body) != 0 {
		t.Errorf("the booking tool was called")
	}
}

// A minor goes to the guardian transfer; on a session with no telephone
// line the transfer fails, the failure is recorded, and the flow goes
// back to the last conversation node, whose model answers.
func TestFlowMinorTransferFailsBackToQualify(t *testing.T) {
	back := func(c model.Call) bool {
		return strings.Contains(strings.Join(path(c), " "), "transfer_failed") && lastRole(c) == "assistant"
	}
	out, c, _, _ := flowCall(t, 12, []string{"I want to book a cleaning", "I am twelve"}, back)
	if got := strings.Join(path(c), " "); !strings.HasSuffix(got, "get_age>guardian(expression) guardian>qualify(transfer_failed)") {
		t.Errorf("path %s", got)
	}
	tr := hasEntry(c, "transfer_to_number")
	if tr == nil || !strings.Contains(str(tr["tool"]), "+15550009999") || !strings.Contains(str(tr["result"]), "transfer failed") {
		t.Errorf("transfer entry %v", tr)
	}
	if out.HangupCause != "" {
		t.Errorf("ended %q", out.HangupCause)
	}
}

// An agent in mode conversation_flow without a flow fails its calls,
// saying why, instead of talking as a single prompt.
func TestFlowMissingFailsTheCall(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	b := newBench(t, func(a *model.Agent) { a.Mode = model.ModeConversationFlow })
	e := &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Hi."}} }),
		STT: &scriptedSTT{}, TTS: newEspeak(), Store: b.st}
	r := start(t, b, e)
	<-r.done
	if r.out.HangupCause != call.CauseAgentUnavailable || !strings.Contains(r.out.ErrorMessage, "no flowDefinition") {
		t.Errorf("outcome %q %q", r.out.HangupCause, r.out.ErrorMessage)
	}
}

// A text-mode test run's chat runs the flow the way a call does: the
// same path, entries and metrics, the booking tool called for real.
func TestFlowInTextChat(t *testing.T) {
	t.Parallel()
	recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, `{"reference":"AB12"}`) })
	b := flowBench(t, recv.URL)
	var mu sync.Mutex
	var seen []llmtest.Request
	agent := flowModel(t, 42, &seen, &mu)
	m := newChatModel(t, callerScript("I want to book a cleaning.", "I am forty two.", "Thanks, bye."),
		func(_ int, req llmtest.Request) llmtest.Reply { return agent(req) })
	e := &Engine{LLM: m.llm, Store: b.st, Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
	res, err := e.Chat(t.Context(), chatWith(b, nil))
	if err != nil {
		t.Fatal(err)
	}
	c := model.Call{Transcript: res.Transcript}
	want := ">greet(start) greet>qualify(condition) qualify>get_age(always) get_age>book(expression) book>done(always)"
	if got := strings.Join(path(c), " "); got != want {
		t.Errorf("path %s\nwant %s\n%q", got, want, chatTexts(res))
	}
	if res.EndCause != call.CauseEndCallTool || res.EndedBy != EndedByAgent {
		t.Errorf("ended %q by %q", res.EndCause, res.EndedBy)
	}
	if last := res.Transcript[len(res.Transcript)-1]; last["text"] != "You are booked, reference AB12. Goodbye." {
		t.Errorf("last entry %v", last)
	}
	if fl, _ := res.Metrics["flow"].(map[string]any); fl == nil || fmt.Sprint(fl["nodesVisited"]) != "[greet qualify get_age book done]" {
		t.Errorf("metrics.flow %v", res.Metrics["flow"])
	}
}

// A global node's condition, judged to hold in a node with an always-edge,
// takes the caller there from anywhere: here the human transfer, which
// fails without a line and comes back.
func TestFlowGlobalNode(t *testing.T) {
	back := func(c model.Call) bool {
		return strings.Contains(strings.Join(path(c), " "), "human>qualify(transfer_failed)") && lastRole(c) == "assistant"
	}
	_, c, _, _ := flowCallJudging(t, 42, "1", []string{"I want to book a cleaning", "Can I talk to a person"}, back)
	if got := strings.Join(path(c), " "); !strings.HasSuffix(got, "greet>qualify(condition) qualify>human(global) human>qualify(transfer_failed)") {
		t.Errorf("path %s", got)
	}
	if tr := hasEntry(c, "transfer_to_number"); tr == nil || !strings.Contains(str(tr["tool"]), "+15550008888") {
		t.Errorf("transfer entry %v", tr)
	}
}
