package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// The numbers of the flow test: the caller's, the flow agent's, and the
// family desk the example's guardian node transfers minors to.
const (
	flowCaller   = "+15550001000"
	flowNumber   = "+15551230600"
	flowGuardian = "+14155550199"
)

// docsFlowAgent is the complete example of docs/flows.md: the POST
// /v1/agents body a user pastes, with its flow of seven nodes.
func docsFlowAgent(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../../docs/flows.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(raw), "\n## Complete example")
	_, block, ok2 := strings.Cut(after, "```json\n")
	block, _, ok3 := strings.Cut(block, "\n```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/flows.md has no JSON block under \"## Complete example\"")
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(block), &body); err != nil {
		t.Fatalf("docs/flows.md's example: %v", err)
	}
	return body
}

// flowModel scripts every agent of the flow test without relying on what
// speech recognition heard (espeak through G.711 is poorly recognised): it
// decides by the system prompt and the response format. The caller says
// its booking line first, its age line once the flow agent has asked
// (asked), then nothing; the extraction answers age.
func flowModel(age *atomic.Int64, asked *atomic.Bool) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if r.ResponseFormat != nil {
			if name, _ := r.ResponseFormat["json_schema"].(map[string]any)["name"].(string); name == "flow_extract" {
				return llmtest.Reply{Text: []string{fmt.Sprintf(`{"age":%d}`, age.Load())}}
			}
			return llmtest.Reply{Text: []string{`{"holds":"none"}`}}
		}
		switch {
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Text: []string{"A caller phoned the dentist."}}
		case strings.HasPrefix(system, "You are a caller"):
			said := 0
			for _, m := range r.Messages {
				if s, _ := m["content"].(string); m["role"] == "assistant" && s != "" {
					said++
				}
			}
			switch {
			case said == 0:
				return llmtest.Reply{Text: []string{"I would like to book a cleaning please."}}
			case said == 1 && asked.Load() && age.Load() >= 18:
				return llmtest.Reply{Text: []string{"I am forty two years old."}}
			case said == 1 && asked.Load():
				return llmtest.Reply{Text: []string{"I am twelve years old."}}
			}
			return llmtest.Reply{} // nothing more to say
		case strings.HasPrefix(system, "You are the guardian desk"):
			return llmtest.Reply{Text: []string{"How can I help?"}}
		case strings.Contains(system, "What to do now: Find out whether the caller wants to book"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "go1", Name: "flow_transition", Arguments: `{"target":"qualify"}`}}}
		case strings.Contains(system, "What to do now: Ask the caller how old"):
			asked.Store(true)
			return llmtest.Reply{Text: []string{"How old are you?"}}
		}
		return llmtest.Reply{Text: []string{"Sorry, could you say that again?"}}
	}
}

// bookings records the custom tool calls of book_appointment and answers
// each with a booking reference.
type bookings struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]any
}

func newBookings(t *testing.T, reference string) *bookings {
	b := &bookings{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body map[string]any
		json.NewDecoder(req.Body).Decode(&body)
		b.mu.Lock()
		b.calls = append(b.calls, body)
		b.mu.Unlock()
		fmt.Fprintf(w, `{"reference":%q,"confirmed":true}`, reference)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *bookings) got() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]any(nil), b.calls...)
}

// flowPath is the flow's path in a transcript: "to(reason)" for each
// flow_transition entry.
func flowPath(rec map[string]any) string {
	var out []string
	for _, e := range toolEntries(rec, "flow_transition") {
		var a map[string]string
		json.Unmarshal([]byte(e["tool"].(map[string]any)["args"].(string)), &a)
		out = append(out, a["to"]+"("+a["reason"]+")")
	}
	return strings.Join(out, " ")
}

// toolEntries are a record's tool_call entries of tool name.
func toolEntries(rec map[string]any, name string) []map[string]any {
	var out []map[string]any
	entries, _ := rec["transcript"].([]any)
	for _, e := range entries {
		e := e.(map[string]any)
		if tool, _ := e["tool"].(map[string]any); tool["name"] == name {
			out = append(out, e)
		}
	}
	return out
}

// A conversation_flow agent end to end, through the front door: agent A
// calls flow agent B, created from docs/flows.md's complete example as
// pasted, over the loopback trunk with local speech both ways
// and a fake model. B greets, moves to qualify on the model's
// flow_transition, takes its always-edge, extracts the caller's age and
// branches on it: an adult is booked through B's custom tool and the end
// node hangs up with the tool's reference; a minor is transferred cold to
// guardian agent C, whom A then hears. B's transcript shows the path each
// call took, and B's post-call webhook carries the extracted variables and
// metrics.flow.
func TestFlowBooksOrTransfersOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	var age atomic.Int64
	var asked atomic.Bool
	fake := llmtest.New(t, flowModel(&age, &asked))
	hooks := newReceiver(t)
	tool := newBookings(t, "AB12")
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30600-30799",
		"--llm-base-url", fake.URL, "--llm-api-key", "k", "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}

	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	guardian := a.do("POST", "/agents", `{"name":"Guardian desk","promptTemplate":"You are the guardian desk.",
		"firstMessage":"Guardian desk, hello."}`, 201)
	// B is the docs' example as a user pastes it, pointed at this test's
	// booking service, webhook receiver and trunk (for the transfer).
	body := docsFlowAgent(t)
	body["customTools"].([]any)[0].(map[string]any)["webhookUrl"] = tool.URL
	body["postCallWebhookUrl"], body["sipTrunkId"] = hooks.URL, trunk["id"]
	raw, _ := json.Marshal(body)
	dental := a.do("POST", "/agents", string(raw), 201)
	if dental["mode"] != "conversation_flow" {
		t.Fatalf("the flow agent's mode is %v", dental["mode"])
	}
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Caller","promptTemplate":"You are a caller booking a cleaning.",
		"sipTrunkId":%q,"postCallWebhookUrl":%q}`, trunk["id"], hooks.URL), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":%q,"agentId":%q}`, flowNumber, dental["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":%q,"agentId":%q}`, flowGuardian, guardian["id"]), 201)

	// inbound is the latest inbound call of agent id other than those in
	// done (nil: none yet).
	inbound := func(id any, done ...any) map[string]any {
		for _, c := range a.do("GET", "/calls?direction=INBOUND&pageSize=100", "", 200)["data"].([]any) {
			c := c.(map[string]any)
			if c["agentId"] == id && !slices.Contains(done, c["id"]) {
				return c
			}
		}
		return nil
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(120 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 120 s\n%s", what, srv.logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	dial := func(years int64) string {
		age.Store(years)
		asked.Store(false)
		out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":%q,"toNumber":%q}`, caller["id"], flowCaller, flowNumber), 201)
		return out["id"].(string)
	}

	var adultID any
	t.Run("adult books", func(t *testing.T) {
		start := time.Now()
		outID := dial(42)
		var in map[string]any
		waitUntil("the adult's call to end with both webhooks", func() bool {
			if in == nil {
				in = inbound(dental["id"])
			}
			return in != nil && hooks.got(in["id"].(string)) != nil && hooks.got(outID) != nil
		})
		adultID = in["id"]
		sent := hooks.got(in["id"].(string))
		if sent["status"] != "COMPLETED" || sent["hangupCause"] != "END_CALL_TOOL" {
			t.Errorf("B's call ended %v %v %v", sent["status"], sent["hangupCause"], sent["errorMessage"])
		}
		want := "greet(start) qualify(condition) get_age(always) book(expression) done(always)"
		if got := flowPath(sent); got != want {
			t.Errorf("B's path %s\nwant %s\n%v", got, want, sent["transcript"])
		}
		calls := tool.got()
		if len(calls) != 1 {
			t.Fatalf("book_appointment called %d times: %v", len(calls), calls)
		}
		args, _ := calls[0]["args"].(map[string]any)
		if calls[0]["event"] != "custom_tool" || calls[0]["tool"] != "book_appointment" || calls[0]["callId"] != in["id"] ||
			args["age"] != 42.0 || args["phone"] != flowCaller {
			t.Errorf("the tool was called with %v", calls[0])
		}
		var last any
		for _, e := range sent["transcript"].([]any) {
			if e := e.(map[string]any); e["role"] == "assistant" {
				last = e["text"]
			}
		}
		if last != "You are booked. Your booking reference is AB12. Thank you for calling Acme Dental, goodbye!" {
			t.Errorf("B's last line %q", last)
		}
		vars, _ := sent["variables"].(map[string]any)
		if vars["age"] != 42.0 || vars["booking.reference"] != "AB12" || vars["user_number"] != flowCaller {
			t.Errorf("B's webhook variables %v", vars)
		}
		fl, _ := sent["metrics"].(map[string]any)["flow"].(map[string]any)
		if visited, _ := json.Marshal(fl["nodesVisited"]); string(visited) != `["greet","qualify","get_age","book","done"]` {
			t.Errorf("B's metrics.flow %v", fl)
		}
		if e := toolEntries(sent, "flow_extract"); len(e) != 1 || !strings.Contains(fmt.Sprint(e[0]["result"]), `{"age":42}`) {
			t.Errorf("flow_extract entries %v", e)
		}
		t.Logf("the adult was booked in %v: %s", time.Since(start).Round(time.Second), flowPath(sent))
	})

	t.Run("minor goes to the guardian", func(t *testing.T) {
		start := time.Now()
		outID := dial(12)
		var in map[string]any
		waitUntil("B to transfer the minor", func() bool {
			in = inbound(dental["id"], adultID)
			return in != nil && len(toolEntries(in, "transfer_to_number")) > 0
		})
		// A is put through to C: C greets while A's call is still up.
		waitUntil("the guardian to greet the caller", func() bool {
			c := inbound(guardian["id"])
			return c != nil && strings.Contains(fmt.Sprint(c["transcript"]), "Guardian desk, hello.")
		})
		if st := a.do("GET", "/calls/"+outID, "", 200)["status"]; st != "IN_PROGRESS" {
			t.Errorf("the caller's call is %v while the guardian greets", st)
		}
		a.do("POST", "/calls/"+outID+"/cancel", "", 200)
		waitUntil("B's call to end", func() bool {
			in = a.do("GET", "/calls/"+in["id"].(string), "", 200)
			return in["status"] != "IN_PROGRESS" && hooks.got(in["id"].(string)) != nil
		})
		sent := hooks.got(in["id"].(string))
		if sent["status"] != "TRANSFERRED" || sent["hangupCause"] != "TRANSFERRED" {
			t.Errorf("B's call ended %v %v %v", sent["status"], sent["hangupCause"], sent["errorMessage"])
		}
		if got := flowPath(sent); !strings.HasSuffix(got, "get_age(always) guardian(expression)") {
			t.Errorf("B's path %s\n%v", got, sent["transcript"])
		}
		tr := toolEntries(sent, "transfer_to_number")
		if len(tr) != 1 || !strings.Contains(fmt.Sprint(tr[0]["tool"]), `"to_number":"`+flowGuardian+`"`) {
			t.Errorf("transfer entries %v", tr)
		}
		if n := len(tool.got()); n != 1 {
			t.Errorf("book_appointment called again: %d calls", n)
		}
		if vars, _ := sent["variables"].(map[string]any); vars["age"] != 12.0 {
			t.Errorf("B's webhook variables %v", vars)
		}
		t.Logf("the minor reached the guardian in %v: %s", time.Since(start).Round(time.Second), flowPath(sent))
	})
}
