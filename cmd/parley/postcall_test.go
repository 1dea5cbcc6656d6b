package main

import (
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// summaryDelay is how long the fake model takes to write a call's summary:
// as long as real models take, well after the far end has hung up.
const summaryDelay = 2 * time.Second

// metricKeys are the metrics every ended call reports.
var metricKeys = []string{"llm_prompt_tokens", "llm_completion_tokens", "llm_prompt_cached_tokens", "llm_input_audio_tokens",
	"llm_output_audio_tokens", "stt_audio_duration", "tts_audio_duration", "tts_characters_count",
	"turn_latency", "interruption_stop_ms", "knowledge_retrievals"}

// Agent A calls agent B over the loopback trunk, hears B's greeting, says
// goodbye and hangs up (end_call): B is hung up on. The model takes two
// seconds to write each summary. Both post-call webhooks carry the summary
// and every metric, and equal the stored records; no call is left live.
// On PostgreSQL when PARLEY_TEST_DATABASE_URL is set. PARLEY_POSTCALL_CALLS
// places more calls than the default 2 (20 is the acceptance run).
func TestPostCallWebhooksCarryTheSlowSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	requireLocalSpeech(t)
	calls := 2
	if v := os.Getenv("PARLEY_POSTCALL_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("PARLEY_POSTCALL_CALLS=%q", v)
		}
		calls = n
	}
	fake := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		system, _ := r.Messages[0]["content"].(string)
		switch {
		case strings.HasPrefix(system, "Summarize"):
			return llmtest.Reply{Delay: summaryDelay, Text: []string{"A customer called the front desk and said goodbye."}}
		case r.Messages[len(r.Messages)-1]["role"] == "tool":
			return llmtest.Reply{}
		case strings.HasPrefix(system, "You are a customer"):
			return llmtest.Reply{Text: []string{"Thank you, goodbye."},
				ToolCalls: []llmtest.ToolCallReply{{ID: "call_end", Name: "end_call", Arguments: "{}"}}}
		}
		return llmtest.Reply{Text: []string{"Certainly."}}
	})
	hooks := newReceiver(t)
	env := []string{"PARLEY_DATA_DIR=" + t.TempDir()}
	store := "sqlite"
	if url := os.Getenv("PARLEY_TEST_DATABASE_URL"); url != "" {
		env = append(env, "PARLEY_DATABASE_URL="+createSchema(t, url, fmt.Sprintf("postcall_%d", time.Now().UnixNano())))
		store = "postgres"
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
	}
	srv := startServer(t, build(t), env,
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30400-30499",
		"--llm-base-url", fake.URL, "--llm-api-key", "test-key", "--llm-model", "fake-model")
	a := api{t: t, base: "http://" + srv.addr + "/v1", key: srv.key}

	trunk := a.do("POST", "/sip-trunks", `{"friendlyName":"Loopback","transport":"loopback"}`, 201)
	b := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Front desk","promptTemplate":"You are the front desk of Luigi's restaurant.",
		"firstMessage":"Luigi's restaurant, how can I help you?","postCallWebhookUrl":%q}`, hooks.URL), 201)
	caller := a.do("POST", "/agents", fmt.Sprintf(`{"name":"Customer","promptTemplate":"You are a customer saying goodbye.",
		"endCallEnabled":true,"sipTrunkId":%q,"postCallWebhookUrl":%q}`, trunk["id"], hooks.URL), 201)
	a.do("POST", "/phone-numbers", fmt.Sprintf(`{"e164":"+15551230000","agentId":%q}`, b["id"]), 201)

	for i := range calls {
		out := a.do("POST", "/calls", fmt.Sprintf(`{"agentId":%q,"fromNumber":"+15550001000","toNumber":"+15551230000"}`, caller["id"]), 201)
		outID := out["id"].(string)
		var inID string
		deadline := time.Now().Add(90 * time.Second)
		for inID == "" || hooks.got(inID) == nil || hooks.got(outID) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("call %d (%s): the webhooks did not both arrive: %v\n%s", i, store, a.do("GET", "/calls/"+outID, "", 200), srv.logs)
			}
			time.Sleep(100 * time.Millisecond)
			list := a.do("GET", "/calls?direction=INBOUND&pageSize=1", "", 200)
			if data, _ := list["data"].([]any); len(data) == 1 && i+1 == int(list["total"].(float64)) {
				inID = data[0].(map[string]any)["id"].(string)
			}
		}
		for _, side := range []struct{ who, id, cause string }{{"caller", outID, "END_CALL_TOOL"}, {"callee (hung up on)", inID, "USER_ENDED"}} {
			sent := hooks.got(side.id)
			if sent["status"] != "COMPLETED" || sent["hangupCause"] != side.cause {
				t.Errorf("call %d, %s: ended %v %v %v", i, side.who, sent["status"], sent["hangupCause"], sent["errorMessage"])
			}
			if sent["summary"] != "A customer called the front desk and said goodbye." {
				t.Errorf("call %d, %s: the webhook's summary is %v", i, side.who, sent["summary"])
			}
			metrics, _ := sent["metrics"].(map[string]any)
			for _, k := range metricKeys {
				if _, ok := metrics[k]; !ok {
					t.Errorf("call %d, %s: the webhook's metrics lack %s: %v", i, side.who, k, metrics)
				}
			}
			// The webhook is the committed record: what the API answers, but
			// for the webhook statuses a payload does not carry.
			var stored map[string]any
			eventually(t, "the webhook status recorded", func() bool {
				stored = a.do("GET", "/calls/"+side.id, "", 200)
				return stored["postCallWebhookStatus"] == "sent"
			})
			stored = maps.Clone(stored)
			delete(stored, "preCallWebhookStatus")
			delete(stored, "postCallWebhookStatus")
			if d := cmp.Diff(stored, sent); d != "" {
				t.Errorf("call %d, %s: the webhook differs from the stored record (-stored +webhook):\n%s", i, side.who, d)
			}
		}
	}
	live := a.do("GET", "/calls?status=QUEUED,INITIATED,RINGING,IN_PROGRESS", "", 200)
	if live["total"] != float64(0) {
		t.Errorf("%v calls are not final after %d calls on %s: %v", live["total"], calls, store, live["data"])
	}
	t.Logf("%d calls on %s: both sides' webhooks carried the summary and every metric", calls, store)
}
