package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/stt/sherpa/sherpatest"
)

// --stt sherpa in the CGO-free binary: the libraries load through purego
// and every utterance streams through sherpa-onnx. No trained model is
// reachable here, so both agents hear through the loudness model
// (sherpatest): each stretch of speech is "hello". Agent A calls agent B
// over the loopback trunk; each hears the other's lines as hellos, and B
// ends the call on its second turn.
func TestAgentsHearEachOtherThroughSherpa(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		if strings.HasPrefix(system, "Summarize") {
			return llmtest.Reply{Text: []string{"A call."}}
		}
		heard := r.Turns()
		if strings.HasPrefix(system, "You are a customer") {
			return llmtest.Reply{Text: []string{"I would like a table for two tonight, please."}}
		}
		if heard >= 2 {
			if r.Messages[len(r.Messages)-1]["role"] == "tool" {
				return llmtest.Reply{}
			}
			return llmtest.Reply{Text: []string{"Goodbye!"}, ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
		}
		return llmtest.Reply{Text: []string{"Certainly, it is booked."}}
	})
	hooks := newReceiver(t)
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30200-30299",
		"--llm-base-url", fake.URL, "--llm-api-key", "test-key",
		"--stt", "sherpa", "--sherpa-model-dir", sherpatest.WriteLoudnessModel(t), "--sherpa-lib-dir", sherpatest.LibDir(t))
	if !strings.Contains(srv.logs.String(), `"msg":"speech to text model loaded","engine":"sherpa"`) {
		t.Fatalf("the model was not loaded at start:\n%s", srv.logs)
	}
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}
	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	b := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk.",
		"firstMessage":"Luigi's restaurant, how can I help you?","firstMessageMode":"static","endCallEnabled":true,
		"postCallWebhookUrl":%q}`, hooks.URL), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Customer","promptTemplate":"You are a customer calling to book a table.",
		"sipTrunkId":%q,"postCallWebhookUrl":%q}`, trunk["id"], hooks.URL), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230001","agentId":%q}`, b["id"]), 201)
	out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230001"}`, caller["id"]), 201)
	outID := out["id"].(string)

	// B ends the call; both records settle and both webhooks arrive.
	in, outRec := awaitConversation(t, a, srv, hooks, outID, 150*time.Second)
	if in["hangupCause"] != "END_CALL_TOOL" {
		t.Errorf("B's call ended %v %v %v", in["status"], in["hangupCause"], in["errorMessage"])
	}
	hellos := regexp.MustCompile(`^hello( hello)*$`)
	for who, rec := range map[string]map[string]any{"A": outRec, "B": in} {
		entries, _ := rec["transcript"].([]any)
		heard := 0
		for _, e := range entries {
			e := e.(map[string]any)
			if e["role"] != "user" {
				continue
			}
			heard++
			if s, _ := e["text"].(string); !hellos.MatchString(s) || e["language"] != "en" {
				t.Errorf("%s heard %q (%v) through the loudness model", who, s, e["language"])
			}
		}
		if heard == 0 {
			t.Errorf("%s heard nothing: %v", who, entries)
		}
	}
}
