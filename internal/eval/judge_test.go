package eval

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// booking is the agent's leg of a call as the engine records it (decoded
// from the store's JSON: numbers are float64).
var booking = []map[string]any{
	{"at": 0.4, "seq": 1.0, "role": "assistant", "type": "message", "text": "Bella Vista, how can I help?", "turnId": "t0", "isFinal": true},
	{"at": 3.2, "seq": 2.0, "role": "user", "type": "message", "text": "A table for four on Friday at seven, please.", "turnId": "t1", "isFinal": true, "language": "en"},
	{"at": 5.0, "seq": 3.0, "role": "tool", "type": "tool_call", "turnId": "t1",
		"tool": map[string]any{"name": "check_availability", "args": `{"party_size":4,"time":"19:00"}`}, "result": map[string]any{"output": `{"available":true}`}},
	{"at": 6.1, "seq": 4.0, "role": "assistant", "type": "message", "text": "Friday at seven for four is free. Shall I", "turnId": "t1", "isFinal": true, "interrupted": true},
	{"at": 7.9, "seq": 5.0, "role": "user", "type": "message", "text": "Yes, book it. Bye!", "turnId": "t2", "isFinal": true, "language": "en"},
	{"at": 65.0, "seq": 6.0, "role": "tool", "type": "tool_call", "turnId": "t2", "tool": map[string]any{"name": "end_call", "args": "{}"}},
	{"at": 66.0, "seq": 7.0, "role": "system", "type": "note", "text": "transferred"},
}

// bookingRendered is booking as the judge reads it.
const bookingRendered = `[0:00] Agent: Bella Vista, how can I help?
[0:03] Caller: A table for four on Friday at seven, please.
[0:05] Agent called the tool "check_availability" with arguments {"party_size":4,"time":"19:00"}
    Result: {"available":true}
[0:06] Agent (interrupted by the caller; only what was heard): Friday at seven for four is free. Shall I
[0:07] Caller: Yes, book it. Bye!
[1:05] Agent called the tool "end_call" with arguments {}
    Result: (none recorded)
[1:06] (system note entry) {"role":"system","text":"transferred","type":"note"}`

const rubric = "The agent checks availability for the right party size and time, and confirms the booking."

func TestJudgeVerdicts(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   Verdict
	}{
		{`{"passed":true,"reasoning":"It called check_availability with party_size 4."}`,
			Verdict{Passed: true, Reasoning: "It called check_availability with party_size 4."}},
		{`{"reasoning":"  It never confirmed the booking: it said \"Shall I\" and was cut off.  ","passed":false}`,
			Verdict{Passed: false, Reasoning: `It never confirmed the booking: it said "Shall I" and was cut off.`}},
		// A server that does not enforce the schema may fence the JSON.
		{"```json\n{\"passed\":true,\"reasoning\":\"Confirmed.\"}\n```", Verdict{Passed: true, Reasoning: "Confirmed."}},
	} {
		m := newFakeModel(t, tc.answer)
		got, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
		if err != nil {
			t.Fatalf("%s: %v", tc.answer, err)
		}
		if got != tc.want {
			t.Errorf("%s: verdict = %+v, want %+v", tc.answer, got, tc.want)
		}
	}
}

func TestJudgeRequest(t *testing.T) {
	m := newFakeModel(t, `{"passed":true,"reasoning":"ok"}`)
	if _, err := (Judge{LLM: m.client, Model: "gpt-judge"}).Score(t.Context(), rubric, booking); err != nil {
		t.Fatal(err)
	}
	reqs := m.server.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "gpt-judge" {
		t.Errorf("model = %q", r.Model)
	}
	if r.Temperature == nil || *r.Temperature != 0 {
		t.Errorf("temperature = %v, want 0", r.Temperature)
	}
	wantFormat := map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": "verdict", "description": "Whether the agent under test passed, and why", "strict": true,
		"schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"passed":    map[string]any{"type": "boolean", "description": "true only if every requirement of the rubric is met"},
				"reasoning": map[string]any{"type": "string", "description": "why, citing what the agent said or did"},
			},
			"required":             []any{"passed", "reasoning"},
			"additionalProperties": false,
		},
	}}
	if diff := cmp.Diff(wantFormat, r.ResponseFormat); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
	msgs := contents(r)
	if len(msgs) != 2 {
		t.Fatalf("messages = %q, want a system and a user message", msgs)
	}
	for _, phrase := range []string{"Judge only the agent's behaviour", "every requirement of the rubric", "cite what the agent said", `"passed"`, `"reasoning"`} {
		if !strings.Contains(msgs[0], phrase) {
			t.Errorf("system prompt lacks %q:\n%s", phrase, msgs[0])
		}
	}
	wantUser := "user: <rubric>\n" + rubric + "\n</rubric>\n\n<transcript>\n" + bookingRendered + "\n</transcript>"
	if diff := cmp.Diff(wantUser, msgs[1]); diff != "" {
		t.Errorf("user message (-want +got):\n%s", diff)
	}
}

func TestRenderTranscript(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []map[string]any
		want    string
	}{
		{"empty", nil, "(The transcript is empty: nothing was said on the call.)"},
		{"made in memory", []map[string]any{
			{"at": 125, "role": "user", "type": "message", "text": "Hello?"},
			{"role": "assistant", "type": "message", "text": "Hi."},
		}, "[2:05] Caller: Hello?\nAgent: Hi."},
		{"arguments as an object", []map[string]any{
			{"role": "tool", "type": "tool_call", "tool": map[string]any{"name": "lookup", "args": map[string]any{"q": "x", "a": 1.0}},
				"result": map[string]any{"output": ""}},
		}, "Agent called the tool \"lookup\" with arguments {\"a\":1,\"q\":\"x\"}\n    Result: "},
		{"fillers while a tool ran", []map[string]any{
			{"role": "assistant", "type": "filler", "text": "One moment."},
			{"role": "assistant", "type": "filler", "sound": "soft"},
		}, "Agent (filler while a tool ran): One moment.\n(A soft waiting sound played while a tool ran.)"},
		{"long result cut", []map[string]any{
			{"role": "tool", "type": "tool_call", "tool": map[string]any{"name": "kb", "args": "{}"},
				"result": map[string]any{"output": strings.Repeat("é", maxRenderedOutput+10)}},
		}, "Agent called the tool \"kb\" with arguments {}\n    Result: " + strings.Repeat("é", maxRenderedOutput-1) + "…"},
	} {
		if diff := cmp.Diff(tc.want, renderTranscript(tc.entries)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestJudgeRetriesMalformedAnswer(t *testing.T) {
	m := newFakeModel(t, "The agent passed.", `{"passed":false,"reasoning":"It did not confirm."}`)
	got, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
	if err != nil {
		t.Fatal(err)
	}
	if got != (Verdict{Passed: false, Reasoning: "It did not confirm."}) {
		t.Errorf("verdict = %+v", got)
	}
	reqs := m.server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first, second := contents(reqs[0]), contents(reqs[1])
	if len(second) != len(first)+2 || !cmp.Equal(first, second[:len(first)]) {
		t.Fatalf("second request's messages = %q, want the first's and two more", second)
	}
	if second[2] != "assistant: The agent passed." {
		t.Errorf("bad answer echoed as %q", second[2])
	}
	if c := second[3]; !strings.HasPrefix(c, "user: Your answer was not valid: the answer is not JSON") {
		t.Errorf("correction = %q", c)
	}
	if reqs[1].ResponseFormat == nil || reqs[1].Temperature == nil || *reqs[1].Temperature != 0 {
		t.Errorf("the retry lost its response_format or temperature: %v", reqs[1].Body)
	}
}

func TestJudgeMalformedTwice(t *testing.T) {
	for _, tc := range []struct {
		name, answer, reason string
	}{
		{"not JSON", "PASS: the agent did well", "the answer is not JSON"},
		{"empty", "", "the answer is empty"},
		{"array", `[true,"ok"]`, "the answer is JSON but not an object"},
		{"null", `null`, "the answer is JSON but not an object"},
		{"trailing text", `{"passed":true,"reasoning":"ok"} done`, "the answer is not JSON"},
		{"missing passed", `{"reasoning":"fine"}`, `missing "passed"`},
		{"missing reasoning", `{"passed":true}`, `missing "reasoning"`},
		{"extra field", `{"passed":true,"reasoning":"ok","score":9}`, `unexpected field "score"`},
		{"passed a string", `{"passed":"true","reasoning":"ok"}`, `"passed" is not a boolean`},
		{"passed null", `{"passed":null,"reasoning":"ok"}`, `"passed" is not a boolean`},
		{"reasoning a number", `{"passed":true,"reasoning":1}`, `"reasoning" is not a string`},
		{"reasoning blank", `{"passed":true,"reasoning":" \n "}`, `"reasoning" is empty`},
		{"passed twice", `{"passed":false,"reasoning":"It did not confirm.","passed":true}`, `the answer gives a key more than once: "passed"`},
	} {
		m := newFakeModel(t, tc.answer, tc.answer)
		_, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
		if !errors.Is(err, ErrMalformedVerdict) {
			t.Errorf("%s: err = %v, want ErrMalformedVerdict", tc.name, err)
			continue
		}
		want := "judge: the model's verdict was not valid twice: " + tc.reason
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %q, want it to start %q", tc.name, err, want)
		}
		if n := len(m.server.Requests()); n != 2 {
			t.Errorf("%s: %d requests, want 2", tc.name, n)
		}
	}
}

func TestJudgeCutOffAnswer(t *testing.T) {
	m := newFakeModelScript(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{`{"passed":true,"reasoning":"The agent`}, FinishReason: "length"}
	})
	_, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
	if !errors.Is(err, ErrMalformedVerdict) || !strings.Contains(err.Error(), "cut off at the token limit") {
		t.Fatalf("err = %v, want ErrMalformedVerdict saying the answer was cut off", err)
	}
}

func TestJudgeLongReasoningCut(t *testing.T) {
	long := strings.Repeat("ü", MaxReasoning+500)
	m := newFakeModel(t, `{"passed":true,"reasoning":"`+long+`"}`)
	got, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got.Reasoning); n != MaxReasoning || !strings.HasSuffix(got.Reasoning, "…") {
		t.Errorf("reasoning of %d characters ending %q, want %d ending in …", n, got.Reasoning[len(got.Reasoning)-6:], MaxReasoning)
	}
}

func TestJudgeStorableReasoning(t *testing.T) {
	m := newFakeModel(t, `{"passed":true,"reasoning":"ok\u0000then"}`)
	got, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reasoning != "ok\uFFFDthen" {
		t.Errorf("reasoning = %q, want the NUL replaced", got.Reasoning)
	}
}

func TestJudgeProviderError(t *testing.T) {
	m := newFakeModelScript(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: http.StatusNotFound, Message: "The model `gpt-judge` does not exist"}
	})
	_, err := Judge{LLM: m.client}.Score(t.Context(), rubric, booking)
	if !errors.Is(err, llm.ErrRejected) || errors.Is(err, ErrMalformedVerdict) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("err = %v, want the provider's ErrRejected with its message", err)
	}
	if n := len(m.server.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (a refusal is not asked again)", n)
	}
}

func TestJudgeNeedsModelAndRubric(t *testing.T) {
	_, err := Judge{}.Score(t.Context(), rubric, booking)
	if !errors.Is(err, ErrNoLLM) || err.Error() != "judging needs a language model: set --llm-base-url (PARLEY_LLM_BASE_URL)" {
		t.Errorf("no model: err = %v", err)
	}
	m := newFakeModel(t)
	if _, err := (Judge{LLM: m.client}).Score(t.Context(), " \n", booking); err == nil || !strings.Contains(err.Error(), "scoring rubric") {
		t.Errorf("blank rubric: err = %v", err)
	}
}
