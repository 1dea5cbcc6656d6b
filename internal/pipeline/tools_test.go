package pipeline

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/otlp"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/stt/deepgram"
	"github.com/parley-voice/parley/internal/provider/stt/deepgram/deepgramtest"
	"github.com/parley-voice/parley/internal/provider/tts/elevenlabs"
	"github.com/parley-voice/parley/internal/provider/tts/elevenlabs/elevenlabstest"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// toolReceiver is a customer's tool endpoint.
type toolReceiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func newToolReceiver(t *testing.T, answer func(w http.ResponseWriter)) *toolReceiver {
	r := &toolReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs, r.body = append(r.reqs, req), append(r.body, b)
		r.mu.Unlock()
		answer(w)
	}))
	t.Cleanup(r.Close)
	return r
}

func (b bench) addTool(t *testing.T, tool model.CustomTool) {
	t.Helper()
	tool.OrgID, tool.AgentID, tool.Enabled = b.agent.OrgID, b.agent.ID, true
	tool.CreatedAt, tool.UpdatedAt = model.Now(), model.Now()
	ctx := context.Background()
	if err := b.st.Update(ctx, func(tx store.Tx) error { return tx.CreateCustomTool(ctx, &tool) }); err != nil {
		t.Fatal(err)
	}
}

// toolTurn runs one caller turn in which the model calls tool with args,
// then answers "Done." and returns the transcript's tool entry and the
// result the model was given.
func toolTurn(t *testing.T, b bench, e *Engine, tool, args string) (entry map[string]any, result string) {
	t.Helper()
	var mu sync.Mutex
	e.LLM = fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case len(req.Tools) == 0:
			return llmtest.Reply{Text: []string{"Summary."}}
		case last["role"] == "tool":
			mu.Lock()
			result, _ = last["content"].(string)
			mu.Unlock()
			return llmtest.Reply{Text: []string{"Done."}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "t1", Name: tool, Arguments: args}}}
	})
	e.STT, e.TTS, e.Store = &scriptedSTT{texts: []string{"Please do it"}}, espeak.New(espeak.Config{}), b.st
	r := start(t, b, e)
	b.waitEntries(t, 1) // the greeting
	r.sess.say(callerSays(t, "Please do it."))
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c := b.stored(t)
		if n := len(c.Transcript); n >= 4 && c.Transcript[n-1]["text"] == "Done." {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.sess.hangup()
	<-r.done
	for _, e := range b.stored(t).Transcript {
		if e["type"] == "tool_call" {
			entry = e
		}
	}
	if entry == nil {
		t.Fatalf("no tool entry: %q", texts(b.stored(t)))
	}
	mu.Lock()
	defer mu.Unlock()
	return entry, result
}

func TestCustomTool(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	t.Run("request shape, headers, query, signature; the response is the result", func(t *testing.T) {
		t.Parallel()
		recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, `{"slots":["19:00","20:30"]}`) })
		b := newBench(t)
		b.addTool(t, model.CustomTool{Name: "check_availability", WebhookURL: recv.URL + "/tools?fixed=1",
			Schema:      map[string]any{"type": "object", "properties": map[string]any{"date": map[string]any{"type": "string"}}},
			Headers:     []model.KeyValue{{Key: "Authorization", Value: "Bearer tool-secret"}},
			QueryParams: []model.KeyValue{{Key: "venue", Value: "luigi"}}})
		e := &Engine{Webhooks: webhook.New(webhook.Options{AllowPrivate: true}),
			Secret: func(context.Context, string) (string, error) { return "whsec_test", nil }}
		entry, result := toolTurn(t, b, e, "check_availability", `{"date":"2026-12-24"}`)
		if result != `{"slots":["19:00","20:30"]}` {
			t.Errorf("the model was given %q", result)
		}
		if str(entry["tool"]) != `map[args:{"date":"2026-12-24"} name:check_availability]` || str(entry["result"]) != `map[output:{"slots":["19:00","20:30"]}]` {
			t.Errorf("tool entry %v", entry)
		}
		recv.mu.Lock()
		defer recv.mu.Unlock()
		if len(recv.reqs) != 1 {
			t.Fatalf("%d tool requests", len(recv.reqs))
		}
		req, body := recv.reqs[0], recv.body[0]
		var got map[string]any
		json.Unmarshal(body, &got)
		if req.Method != "POST" || req.URL.Path != "/tools" || req.URL.Query().Get("fixed") != "1" || req.URL.Query().Get("venue") != "luigi" {
			t.Errorf("request %s %s", req.Method, req.URL)
		}
		if got["event"] != "custom_tool" || got["callId"] != b.call.ID || got["agentId"] != b.agent.ID || got["tool"] != "check_availability" ||
			str(got["args"]) != "map[date:2026-12-24]" || len(got) != 5 {
			t.Errorf("body %s", body)
		}
		if req.Header.Get("Authorization") != "Bearer tool-secret" || req.Header.Get("X-Parley-Event") != "custom_tool" ||
			req.Header.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", req.Header)
		}
		if err := webhook.Verify("whsec_test", req.Header.Get("X-Parley-Signature"), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
	})
	t.Run("sendRawRequestBody posts the args alone", func(t *testing.T) {
		t.Parallel()
		recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, "ok") })
		b := newBench(t)
		b.addTool(t, model.CustomTool{Name: "log_lead", WebhookURL: recv.URL, SendRawRequestBody: true})
		e := &Engine{Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
		toolTurn(t, b, e, "log_lead", `{"name":"Ada","party":2}`)
		recv.mu.Lock()
		defer recv.mu.Unlock()
		if len(recv.body) != 1 || string(recv.body[0]) != `{"name":"Ada","party":2}` {
			t.Errorf("body %q", recv.body)
		}
	})
	t.Run("a tool slower than its timeout gives the model an error", func(t *testing.T) {
		t.Parallel()
		recv := newToolReceiver(t, func(w http.ResponseWriter) { time.Sleep(2500 * time.Millisecond) })
		one := 1
		b := newBench(t)
		b.addTool(t, model.CustomTool{Name: "slow", WebhookURL: recv.URL, TimeoutSeconds: &one})
		e := &Engine{Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
		began := time.Now()
		_, result := toolTurn(t, b, e, "slow", `{}`)
		if !strings.HasPrefix(result, "error: ") || !strings.Contains(result, "1s") {
			t.Errorf("result %q", result)
		}
		if took := time.Since(began); took > 15*time.Second {
			t.Errorf("the turn took %v", took)
		}
	})
	t.Run("the SSRF guard refuses a loopback tool unless the operator allows it", func(t *testing.T) {
		t.Parallel()
		recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, "reached") })
		b := newBench(t)
		b.addTool(t, model.CustomTool{Name: "internal", WebhookURL: recv.URL})
		e := &Engine{Webhooks: webhook.New(webhook.Options{})}
		_, result := toolTurn(t, b, e, "internal", `{}`)
		if !strings.HasPrefix(result, "error: ") || len(recv.reqs) != 0 {
			t.Errorf("result %q, %d requests reached the receiver", result, len(recv.reqs))
		}
	})
	t.Run("the response is cut at 16 KiB", func(t *testing.T) {
		t.Parallel()
		recv := newToolReceiver(t, func(w http.ResponseWriter) { io.WriteString(w, strings.Repeat("x", 40000)) })
		b := newBench(t)
		b.addTool(t, model.CustomTool{Name: "big", WebhookURL: recv.URL})
		e := &Engine{Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
		if _, result := toolTurn(t, b, e, "big", `{}`); len(result) != 16<<10 {
			t.Errorf("result of %d bytes", len(result))
		}
	})
}

func TestTransferToolEntry(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	yes := true
	b := newBench(t, func(a *model.Agent) {
		a.Config.TransferEnabled = &yes
		a.Config.TransferRoutes = []model.TransferRoute{{ToNumber: "+15550009999", Condition: "the caller asks for a manager"}}
	})
	var offered []map[string]any
	e := &Engine{}
	entry, result := toolTurn(t, b, e, "transfer_to_number", `{"to_number":"+15550009999"}`)
	_ = offered
	// An in-memory call has no line to transfer: the entry says so and the
	// caller stays with the agent.
	if str(entry["tool"]) != `map[args:{"to_number":"+15550009999"} name:transfer_to_number]` || !strings.HasPrefix(result, "transfer failed:") {
		t.Errorf("entry %v, result %q", entry, result)
	}
	if entry["turnId"] != "turn-1" || entry["role"] != "tool" {
		t.Errorf("entry %v", entry)
	}
	_, result = toolTurn(t, newBench(t, func(a *model.Agent) {
		a.Config.TransferEnabled = &yes
		a.Config.TransferRoutes = []model.TransferRoute{{ToNumber: "+15550009999", Condition: "always"}}
	}), &Engine{}, "transfer_to_number", `{"to_number":"+15550000000"}`)
	if !strings.Contains(result, "not one of the transfer destinations") {
		t.Errorf("a number outside the routes: %q", result)
	}
}

func TestEndCallEntryAndCause(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	b := newBench(t)
	e := &Engine{}
	e.LLM = fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Reply{Text: []string{"Summary."}}
		}
		if len(req.Tools) != 1 || req.Tools[0]["function"].(map[string]any)["name"] != "end_call" {
			t.Errorf("tools offered %v", req.Tools)
		}
		return llmtest.Reply{Text: []string{"Goodbye."}, ToolCalls: []llmtest.ToolCallReply{{ID: "e1", Name: "end_call", Arguments: "{}"}}}
	})
	e.STT, e.TTS, e.Store = &scriptedSTT{texts: []string{"bye"}}, espeak.New(espeak.Config{}), b.st
	r := start(t, b, e)
	b.waitEntries(t, 1) // the greeting
	r.sess.say(callerSays(t, "Bye now."))
	if c := r.cause(t, 20*time.Second); c != call.CauseEndCallTool {
		t.Fatalf("ended %s", c)
	}
	c := b.stored(t)
	last := c.Transcript[len(c.Transcript)-1]
	if last["type"] != "tool_call" || str(last["tool"]) != "map[args:{} name:end_call]" || str(last["result"]) != "map[output:the call is ending]" {
		t.Errorf("entry %v", last)
	}
}

// The cloud engines through their loopback fakes: the caller's audio is
// streamed to Deepgram while they speak and the agent's voice comes from
// ElevenLabs' WebSocket, with the agent's voiceId and voiceSpeed.
func TestCloudSpeechEngines(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	dg := deepgramtest.New(t, deepgramtest.Options{Transcript: func(deepgramtest.StreamInfo) string { return "A table for two please." }})
	el := elevenlabstest.New(t, elevenlabstest.Options{})
	voice, fast := elevenlabs.DefaultVoice, 1.1
	b := newBench(t, func(a *model.Agent) { a.Config.VoiceID, a.Config.VoiceSpeed = &voice, &fast })
	e := &Engine{
		LLM: fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Text: []string{"Booked."}, ToolCalls: []llmtest.ToolCallReply{{ID: "e", Name: "end_call", Arguments: "{}"}}}
		}),
		STT:   deepgram.New(deepgram.Config{BaseURL: dg.URL, APIKey: deepgramtest.DefaultAPIKey}),
		TTS:   elevenlabs.New(elevenlabs.Config{BaseURL: el.URL, APIKey: elevenlabstest.DefaultAPIKey}),
		Store: b.st,
	}
	r := start(t, b, e)
	b.waitEntries(t, 1) // the greeting
	r.sess.say(callerSays(t, "A table for two please."))
	if c := r.cause(t, 20*time.Second); c != call.CauseEndCallTool {
		t.Fatalf("ended %s", c)
	}
	got := texts(b.stored(t))
	want := []string{"assistant:Hello, this is Parley.", "user:A table for two please.", "assistant:Booked.", "tool:map[args:{} name:end_call]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("transcript %q", got)
	}
	streams := dg.Streams()
	if len(streams) == 0 || streams[0].SampleRate != Rate || len(streams[0].Audio) < Rate/2 {
		t.Fatalf("deepgram streams %+v", streams)
	}
	sessions := el.Sessions()
	if len(sessions) != 2 || sessions[0].Voice != voice || sessions[1].Text() != "Booked. " {
		t.Errorf("elevenlabs sessions: %d, first voice %q", len(sessions), sessions[0].Voice)
	}
	if s := sessions[0].BOS().VoiceSettings; s == nil || s.Speed == nil || *s.Speed != 1.1 {
		t.Errorf("voice settings %+v", s)
	}
	if played := len(r.sess.playedAudio()); played < Rate/2 {
		t.Errorf("played %d samples", played)
	}
}

func TestCallTrace(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	var mu sync.Mutex
	var names []string
	parents := map[string]string{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct{ Name, SpanID, ParentSpanID string }
				}
			}
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		defer mu.Unlock()
		for _, s := range req.ResourceSpans[0].ScopeSpans[0].Spans {
			names = append(names, s.Name)
			parents[s.SpanID] = s.ParentSpanID
		}
	}))
	defer collector.Close()
	yes := true
	b := newBench(t, func(a *model.Agent) { a.Config.PlayKeypadTouchToneEnabled = &yes })
	e := &Engine{Tracer: otlp.New(collector.URL, "parley", nil)}
	toolTurn(t, b, e, "press_digit", `{"digits":"1"}`)
	e.Wait() // the trace goes out after the call
	mu.Lock()
	defer mu.Unlock()
	want := []string{"call", "turn", "endpointing", "stt", "llm.first_token", "llm.first_sentence", "tts.first_audio", "line"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("spans %q", names)
	}
	roots := 0
	for _, p := range parents {
		if p == "" {
			roots++
		} else if _, ok := parents[p]; !ok {
			t.Errorf("a span's parent %s is not in the trace", p)
		}
	}
	if roots != 1 {
		t.Errorf("%d root spans", roots)
	}
}
