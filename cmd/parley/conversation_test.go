package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/stt/sphinx"
)

// requireLocalSpeech fails under CI and skips elsewhere when espeak-ng or
// what the local recognizer loads (pocketsphinx's libraries and model) is
// missing.
func requireLocalSpeech(t testing.TB) {
	t.Helper()
	var missing error
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		missing = err
	} else if err := sphinx.Available(); err != nil {
		missing = err
	}
	if missing == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("local speech is missing (run scripts/deps.sh): %v", missing)
	}
	t.Skipf("local speech is missing: %v", missing)
}

// A whole conversation offline, through the front door: agent A calls
// agent B over the loopback trunk with local speech both ways (espeak-ng,
// pocketsphinx) and a fake model on loopback. A follows a short script, B
// answers and ends the call with end_call; both transcripts hold the
// exchange in order, and B's post-call webhook carries its transcript,
// summary and every seed metric.
func TestAgentsHoldAConversationOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	// No "Perfect, thank you ..." here: the front desk's end of turn rightly
	// takes "perfect" or "perfect thank you" after a comma's pause as a
	// whole reply (turntaking), and its answer then overlaps the rest of the
	// line, which this test's exact transcripts do not allow for.
	customer := []string{"Hi, I would like a table for two tonight.", "That is all I needed, goodbye."}
	frontDesk := []string{"Certainly, a table for two tonight is booked.", "You are welcome, goodbye!"}
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{"A customer booked a table for two tonight."}}
		}
		heard := r.Turns()
		if strings.HasPrefix(system, "You are a customer") {
			if heard > len(customer) {
				// The script is said: a piece of the front desk's goodbye heard
				// before its hang-up (a loaded machine splits a line at a comma)
				// gets silence, not the last line again over the goodbye.
				return llmtest.Reply{}
			}
			return llmtest.Reply{Text: []string{customer[heard-1]}}
		}
		if heard >= len(frontDesk) {
			if r.Messages[len(r.Messages)-1]["role"] == "tool" {
				return llmtest.Reply{}
			}
			return llmtest.Reply{Text: []string{frontDesk[1]},
				ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
		}
		return llmtest.Reply{Text: []string{frontDesk[heard-1]}}
	})
	hooks := newReceiver(t)

	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30000-30099",
		"--llm-base-url", fake.URL, "--llm-api-key", "test-key", "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}

	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	b := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's restaurant.",
		"firstMessage":"Luigi's restaurant, how can I help you?","firstMessageMode":"static","endCallEnabled":true,
		"postCallWebhookUrl":%q}`, hooks.URL), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Customer","promptTemplate":"You are a customer calling to book a table.",
		"sipTrunkId":%q,"postCallWebhookUrl":%q}`, trunk["id"], hooks.URL), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230000","agentId":%q}`, b["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230000"}`, caller["id"]), 201)
	outID := out["id"].(string)

	// B ends the call; both records settle and both webhooks arrive.
	in, outRec := awaitConversation(t, a, srv, hooks, outID, 150*time.Second)
	if in["status"] != "COMPLETED" || in["hangupCause"] != "END_CALL_TOOL" {
		t.Errorf("B's call ended %v %v %v", in["status"], in["hangupCause"], in["errorMessage"])
	}
	if outRec["status"] != "COMPLETED" || outRec["hangupCause"] != "USER_ENDED" {
		t.Errorf("A's call ended %v %v %v", outRec["status"], outRec["hangupCause"], outRec["errorMessage"])
	}

	// B: its greeting, then turn by turn what it heard and what it said,
	// then the end_call entry.
	wantB := []string{"assistant:Luigi's restaurant, how can I help you?", "user", "assistant:" + frontDesk[0], "user",
		"assistant:" + frontDesk[1], "tool:end_call"}
	checkTranscript(t, "B", in, wantB)
	// A: what it heard of B's greeting, its lines, what it heard back.
	wantA := []string{"user", "assistant:" + customer[0], "user", "assistant:" + customer[1]}
	checkTranscript(t, "A", outRec, wantA)

	if in["summary"] != "A customer booked a table for two tonight." {
		t.Errorf("summary %v", in["summary"])
	}
	metrics, _ := in["metrics"].(map[string]any)
	for _, k := range []string{"llm_prompt_tokens", "llm_completion_tokens", "llm_prompt_cached_tokens", "llm_input_audio_tokens",
		"llm_output_audio_tokens", "stt_audio_duration", "tts_audio_duration", "tts_characters_count"} {
		if _, ok := metrics[k]; !ok {
			t.Errorf("B's metrics lack %s: %v", k, metrics)
		}
	}
	if n, _ := metrics["tts_characters_count"].(float64); n < float64(len(frontDesk[0])) {
		t.Errorf("tts_characters_count %v", metrics["tts_characters_count"])
	}
	if d, _ := metrics["stt_audio_duration"].(float64); d < 1 {
		t.Errorf("stt_audio_duration %v: B heard less than a second of A", metrics["stt_audio_duration"])
	}
	if turns, _ := metrics["turn_latency"].([]any); len(turns) < 2 {
		t.Errorf("turn_latency %v", metrics["turn_latency"])
	}
	// The model was asked with the agent's settings.
	reqs := fake.Requests()
	if len(reqs) == 0 || reqs[0].Model != "fake-model" || reqs[0].Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("model requests: %d, first %+v", len(reqs), reqs[0])
	}
}

// awaitConversation waits, up to limit, until the inbound leg of outID
// (the only inbound call) and outID itself have both ended and had their
// post-call webhooks delivered, and returns the two webhooks: the inbound
// one first.
func awaitConversation(tb testing.TB, a api, srv *server, hooks *receiver, outID string, limit time.Duration) (in, out map[string]any) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		if time.Now().After(deadline) {
			tb.Fatalf("the conversation did not end: %v\n%s", a.do("GET", "/calls/"+outID, "", 200), srv.logs)
		}
		time.Sleep(200 * time.Millisecond)
		data, _ := a.do("GET", "/calls?direction=INBOUND", "", 200)["data"].([]any)
		if len(data) != 1 {
			continue
		}
		inID := data[0].(map[string]any)["id"].(string)
		if in, out = hooks.got(inID), hooks.got(outID); in != nil && out != nil {
			return in, out
		}
	}
}

// checkTranscript compares a record's transcript with want: "role" or
// "role:text" for messages, "tool:name" for tool calls, in order, with
// seq 0..n-1, each entry beginning ("at") no later than it ends ("endAt"),
// messages that begin no earlier than the message before them began, and
// user entries that have text.
func checkTranscript(t *testing.T, who string, rec map[string]any, want []string) {
	t.Helper()
	entries, _ := rec["transcript"].([]any)
	var got []string
	last := 0.0
	for i, e := range entries {
		e := e.(map[string]any)
		if int(e["seq"].(float64)) != i {
			t.Errorf("%s entry %d has seq %v", who, i, e["seq"])
		}
		at, _ := e["at"].(float64)
		end, hasEnd := e["endAt"].(float64)
		switch {
		case !hasEnd || at > end || at < 0 || (i > 0 && end == 0):
			t.Errorf("%s entry %d at %v endAt %v", who, i, e["at"], e["endAt"])
		case e["type"] != "message":
		case at < last:
			t.Errorf("%s message %d at %v, before the one before it (%v)", who, i, at, last)
		default:
			last = at
		}
		switch {
		case e["type"] == "tool_call":
			got = append(got, "tool:"+e["tool"].(map[string]any)["name"].(string))
		case e["role"] == "user":
			if s, _ := e["text"].(string); strings.TrimSpace(s) == "" || e["language"] == nil {
				t.Errorf("%s user entry %v", who, e)
			}
			if len(got) == 0 || got[len(got)-1] != "user" { // a pause mid-line may split it in two turns
				got = append(got, "user")
			}
		default:
			got = append(got, fmt.Sprintf("%v:%v", e["role"], e["text"]))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s's transcript:\n%s\nwant:\n%s\nentries: %v", who, strings.Join(got, "\n"), strings.Join(want, "\n"), entries)
	}
}

// The transfer tool end to end: agent A calls agent B, asks for a manager,
// and B's model calls transfer_to_number; the caller is bridged to agent C
// over the loopback trunk and hears C's greeting; B's record holds the
// tool entry and ends TRANSFERRED once the caller hangs up.
func TestAgentTransfersTheCallerOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		last := r.Messages[len(r.Messages)-1]
		switch {
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Text: []string{"The caller was transferred to a manager."}}
		case strings.HasPrefix(system, "You are a customer"):
			return llmtest.Reply{Text: []string{"I would like to speak to a manager please."}}
		case strings.HasPrefix(system, "You are the manager"):
			return llmtest.Reply{Text: []string{"Of course, how can I help?"}}
		case last["role"] == "tool":
			return llmtest.Reply{}
		}
		return llmtest.Reply{Text: []string{"Let me transfer you."},
			ToolCalls: []llmtest.ToolCallReply{{ID: "call_t", Name: "transfer_to_number", Arguments: `{"to_number":"+15551230002"}`}}}
	})
	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30100-30199",
		"--llm-base-url", fake.URL, "--llm-api-key", "k")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	manager := a.do("POST", "/agents", `{"name":"Manager","promptTemplate":"You are the manager.","firstMessage":"Manager speaking."}`, 201)
	desk := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk.",
		"firstMessage":"Front desk, hello.","sipTrunkId":%q,"transferEnabled":true,"transferMode":"cold",
		"transferRoutes":[{"to_number":"+15551230002","condition":"the caller asks for a manager"}]}`, trunk["id"]), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Customer","promptTemplate":"You are a customer who wants a manager.","sipTrunkId":%q}`, trunk["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230001","agentId":%q}`, desk["id"]), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230002","agentId":%q}`, manager["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230001"}`, caller["id"]), 201)
	outID := out["id"].(string)

	// Wait for the manager's greeting to reach the customer.
	byAgent := func() map[any]map[string]any {
		m := map[any]map[string]any{}
		for _, c := range a.do("GET", "/calls?pageSize=100", "", 200)["data"].([]any) {
			c := c.(map[string]any)
			if c["direction"] == "INBOUND" {
				m[c["agentId"]] = c
			}
		}
		return m
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the caller never reached the manager: %v\n%v", a.do("GET", "/calls/"+outID, "", 200), byAgent())
		}
		time.Sleep(300 * time.Millisecond)
		m, ok := byAgent()[manager["id"]]
		if ok && len(m["transcript"].([]any)) > 0 && len(a.do("GET", "/calls/"+outID, "", 200)["transcript"].([]any)) >= 3 {
			break
		}
	}
	a.do("POST", "/calls/"+outID+"/cancel", "", 200)
	var deskCall map[string]any
	deadline = time.Now().Add(20 * time.Second)
	for deskCall == nil || deskCall["status"] == "IN_PROGRESS" {
		if time.Now().After(deadline) {
			t.Fatalf("the front desk's call did not end: %v", deskCall)
		}
		time.Sleep(200 * time.Millisecond)
		deskCall = byAgent()[desk["id"]]
	}
	if deskCall["status"] != "TRANSFERRED" || deskCall["hangupCause"] != "TRANSFERRED" {
		t.Errorf("front desk call %v %v %v", deskCall["status"], deskCall["hangupCause"], deskCall["errorMessage"])
	}
	var tool map[string]any
	for _, e := range deskCall["transcript"].([]any) {
		if e := e.(map[string]any); e["type"] == "tool_call" {
			tool = e
		}
	}
	if tool == nil || tool["tool"].(map[string]any)["name"] != "transfer_to_number" ||
		!strings.Contains(tool["tool"].(map[string]any)["args"].(string), `"to_number":"+15551230002"`) || tool["turnId"] != "turn-1" {
		t.Errorf("transfer entry %v in %v", tool, deskCall["transcript"])
	}
	// The customer's record: it heard the desk, asked, then heard the manager.
	cust := a.do("GET", "/calls/"+outID, "", 200)
	var said []string
	for _, e := range cust["transcript"].([]any) {
		if e := e.(map[string]any); e["role"] == "assistant" {
			said = append(said, e["text"].(string))
		}
	}
	if len(said) == 0 || said[0] != "I would like to speak to a manager please." {
		t.Errorf("customer said %q", said)
	}
}
