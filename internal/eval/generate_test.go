package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

const agentPrompt = "You are the receptionist of Bella Vista. You book tables with check_availability and book_table."

var twoTests = []GeneratedTest{
	{Name: "Books a table for four & confirms", Script: "You are a caller who wants a table for four on Friday at 7 pm.",
		ScoringRubric: "The agent checks availability for <4> at 19:00 and confirms the booking."},
	{Name: "Fully booked evening", Script: "You are a caller who insists on Saturday at 8 pm, which is full.",
		ScoringRubric: "The agent says Saturday at 8 is full and offers another time."},
}

// answerOf is the model's answer listing tests.
func answerOf(t *testing.T, tests []GeneratedTest) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"tests": tests}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestGenerate(t *testing.T) {
	answer := answerOf(t, twoTests)
	m := newFakeModel(t, "\n"+answer+"\n")
	g := Generator{LLM: m.client, Model: "gpt-gen"}
	tests, messages, err := g.Generate(t.Context(), agentPrompt, "Bookings, including a full evening.", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(twoTests, tests); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	wantMessages := []ChatMessage{
		{Role: "user", Content: "Bookings, including a full evening."},
		{Role: "assistant", Content: answer},
	}
	if diff := cmp.Diff(wantMessages, messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if !strings.Contains(messages[1].Content, "four & confirms") || !strings.Contains(messages[1].Content, "<4>") {
		t.Errorf("answer %q escapes & or <", messages[1].Content)
	}

	reqs := m.server.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "gpt-gen" {
		t.Errorf("model = %q", r.Model)
	}
	sent := contents(r)
	if len(sent) != 2 || sent[1] != "user: Bookings, including a full evening." {
		t.Fatalf("messages sent = %q, want the system prompt and the prompt", sent)
	}
	for _, phrase := range []string{"<agent_prompt>\n" + agentPrompt + "\n</agent_prompt>", `"You are a caller who ..."`,
		"pass criteria for the agent", "between 1 and 20"} {
		if !strings.Contains(sent[0], phrase) {
			t.Errorf("system prompt lacks %q:\n%s", phrase, sent[0])
		}
	}
	item := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":          map[string]any{"type": "string", "description": "short title of the scenario"},
			"script":        map[string]any{"type": "string", "description": "instructions for the simulated caller, second person"},
			"scoringRubric": map[string]any{"type": "string", "description": "pass criteria for the agent under test"},
		},
		"required":             []any{"name", "script", "scoringRubric"},
		"additionalProperties": false,
	}
	wantFormat := map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": "test_cases", "description": "Test cases for the voice agent", "strict": true,
		"schema": map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"tests": map[string]any{"type": "array", "items": item}},
			"required":             []any{"tests"},
			"additionalProperties": false,
		},
	}}
	if diff := cmp.Diff(wantFormat, r.ResponseFormat); diff != "" {
		t.Errorf("response_format (-want +got):\n%s", diff)
	}
}

func TestGenerateWithPreviousMessages(t *testing.T) {
	harder := []GeneratedTest{{Name: "Angry caller", Script: "You are a caller who is furious about a lost booking.",
		ScoringRubric: "The agent apologises and rebooks."}}
	m := newFakeModel(t, answerOf(t, twoTests), answerOf(t, harder))
	g := Generator{LLM: m.client}

	// The first generation's messages go back as previousMessages, as a
	// client refining them sends them.
	_, first, err := g.Generate(t.Context(), agentPrompt, "Bookings.", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests, messages, err := g.Generate(t.Context(), agentPrompt, "Make them harder.", first)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(harder, tests); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	want := []ChatMessage{
		{Role: "user", Content: "Bookings."},
		{Role: "assistant", Content: answerOf(t, twoTests)},
		{Role: "user", Content: "Make them harder."},
		{Role: "assistant", Content: answerOf(t, harder)},
	}
	if diff := cmp.Diff(want, messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	sent := contents(m.server.Requests()[1])
	var wantSent []string
	for _, msg := range want[:3] {
		wantSent = append(wantSent, msg.Role+": "+msg.Content)
	}
	if diff := cmp.Diff(wantSent, sent[1:]); diff != "" {
		t.Errorf("messages sent after the system prompt (-want +got):\n%s", diff)
	}
}

func TestGenerateDefaultsRoles(t *testing.T) {
	m := newFakeModel(t, answerOf(t, twoTests))
	previous := []ChatMessage{
		{Content: "Bookings."},
		{Content: `{"tests":[]}`},
		{Role: "user", Content: "Add cancellations."},
		{Role: "assistant", Content: "Sure."},
		{Content: "And no-shows."},
	}
	_, messages, err := Generator{LLM: m.client}.Generate(t.Context(), agentPrompt, "Make them harder.", previous)
	if err != nil {
		t.Fatal(err)
	}
	want := []ChatMessage{
		{Role: "user", Content: "Bookings."},
		{Role: "assistant", Content: `{"tests":[]}`},
		{Role: "user", Content: "Add cancellations."},
		{Role: "assistant", Content: "Sure."},
		{Role: "user", Content: "And no-shows."},
		{Role: "user", Content: "Make them harder."},
		{Role: "assistant", Content: answerOf(t, twoTests)},
	}
	if diff := cmp.Diff(want, messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	sent := contents(m.server.Requests()[0])[1:]
	for i, msg := range want[:6] {
		if sent[i] != msg.Role+": "+msg.Content {
			t.Errorf("message %d sent as %q, want role %s", i, sent[i], msg.Role)
		}
	}
	if previous[0].Role != "" {
		t.Error("the caller's previous messages were changed")
	}
}

func TestNormalizeMessages(t *testing.T) {
	for _, tc := range []struct {
		roles, want []string
	}{
		{[]string{"", "", ""}, []string{"user", "assistant", "user"}},
		{[]string{"assistant", ""}, []string{"assistant", "user"}},
		{[]string{"user", "", "user", ""}, []string{"user", "assistant", "user", "assistant"}},
		{[]string{"", "user", ""}, []string{"user", "user", "assistant"}},
		{nil, []string{}},
	} {
		in := make([]ChatMessage, len(tc.roles))
		for i, r := range tc.roles {
			in[i] = ChatMessage{Role: r, Content: fmt.Sprint(i)}
		}
		out, err := NormalizeMessages(in)
		if err != nil {
			t.Fatalf("%q: %v", tc.roles, err)
		}
		got := []string{}
		for _, m := range out {
			got = append(got, m.Role)
		}
		if !cmp.Equal(tc.want, got) {
			t.Errorf("%q: roles = %q, want %q", tc.roles, got, tc.want)
		}
	}
	if _, err := NormalizeMessages([]ChatMessage{{Role: "user"}, {Role: "system", Content: "x"}}); err == nil || !strings.Contains(err.Error(), `"system"`) {
		t.Errorf("system role: err = %v", err)
	}
}

// validTests returns n valid tests.
func validTests(n int) []GeneratedTest {
	out := make([]GeneratedTest, n)
	for i := range out {
		out[i] = GeneratedTest{Name: fmt.Sprintf("Case %d", i), Script: "You are a caller who asks for the hours.", ScoringRubric: "The agent gives the hours."}
	}
	return out
}

func TestGenerateLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	with := func(f func(*GeneratedTest)) []GeneratedTest {
		ts := validTests(2)
		f(&ts[1])
		return ts
	}
	for _, tc := range []struct {
		name, answer, reason string
	}{
		{"no tests", answerOf(t, []GeneratedTest{}), `"tests" is empty`},
		{"21 tests", answerOf(t, validTests(21)), `"tests" has 21 tests: write at most 20`},
		{"tests null", `{"tests":null}`, `"tests" is not an array`},
		{"tests an object", `{"tests":{"name":"x"}}`, `"tests" is not an array`},
		{"not JSON", "Here are your tests: 1. Booking", "the answer is not JSON"},
		{"missing tests", `{"cases":[]}`, `missing "tests"`},
		{"extra top field", `{"tests":[{"name":"a","script":"b","scoringRubric":"c"}],"notes":""}`, `unexpected field "notes"`},
		{"a test not an object", `{"tests":["Booking"]}`, "tests[0] is JSON but not an object"},
		{"empty name", answerOf(t, with(func(g *GeneratedTest) { g.Name = "  " })), `"tests[1].name" is empty`},
		{"missing rubric", `{"tests":[{"name":"a","script":"b"}]}`, `missing "tests[0].scoringRubric"`},
		{"extra field", `{"tests":[{"name":"a","script":"b","scoringRubric":"c","variables":{}}]}`, `unexpected field "tests[0].variables"`},
		{"a key twice", `{"tests":[{"name":"a","script":"b","scoringRubric":"c"},{"name":"d","script":"e","scoringRubric":"f","script":"g"}]}`,
			`the answer gives a key more than once: "tests[1].script"`},
		{"script a number", `{"tests":[{"name":"a","script":7,"scoringRubric":"c"}]}`, `"tests[0].script" is not a string`},
		{"name too long", answerOf(t, with(func(g *GeneratedTest) { g.Name = long(129) })), `"tests[1].name" has 129 characters: at most 128`},
		{"script too long", answerOf(t, with(func(g *GeneratedTest) { g.Script = long(10001) })), `"tests[1].script" has 10001 characters: at most 10000`},
		{"rubric too long", answerOf(t, with(func(g *GeneratedTest) { g.ScoringRubric = long(5001) })), `"tests[1].scoringRubric" has 5001 characters: at most 5000`},
	} {
		m := newFakeModel(t, tc.answer, tc.answer)
		tests, messages, err := Generator{LLM: m.client}.Generate(t.Context(), agentPrompt, "Hours.", nil)
		if !errors.Is(err, ErrMalformedGeneration) {
			t.Errorf("%s: err = %v, want ErrMalformedGeneration", tc.name, err)
			continue
		}
		want := "the model's tests were not valid twice: " + tc.reason
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %q, want it to start %q", tc.name, err, want)
		}
		if tests != nil || messages != nil {
			t.Errorf("%s: tests %v and messages %v returned with the error", tc.name, tests, messages)
		}
		if n := len(m.server.Requests()); n != 2 {
			t.Errorf("%s: %d requests, want 2", tc.name, n)
		}
	}
}

func TestGenerateAtTheLimits(t *testing.T) {
	ts := validTests(MaxGeneratedTests)
	ts[0] = GeneratedTest{Name: strings.Repeat("ñ", 128), Script: strings.Repeat("s", 10000), ScoringRubric: strings.Repeat("r", 5000)}
	m := newFakeModel(t, answerOf(t, ts))
	got, _, err := Generator{LLM: m.client}.Generate(t.Context(), agentPrompt, "Hours.", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(ts, got) {
		t.Errorf("got %d tests, not the %d sent", len(got), len(ts))
	}
}

func TestGenerateRetriesMalformedAnswer(t *testing.T) {
	bad := answerOf(t, []GeneratedTest{{Name: "", Script: "You are a caller.", ScoringRubric: "The agent answers."}})
	m := newFakeModel(t, bad, answerOf(t, twoTests))
	tests, messages, err := Generator{LLM: m.client}.Generate(t.Context(), agentPrompt, "Bookings.", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(twoTests, tests) {
		t.Errorf("tests = %+v", tests)
	}
	// Only the accepted answer is part of the conversation handed back.
	if len(messages) != 2 || messages[1].Content != answerOf(t, twoTests) {
		t.Errorf("messages = %+v", messages)
	}
	reqs := m.server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := contents(reqs[1])
	if len(second) != 4 || second[2] != "assistant: "+bad ||
		!strings.HasPrefix(second[3], `user: Your answer was not valid: "tests[0].name" is empty`) {
		t.Errorf("second request's messages = %q", second)
	}
}

func TestGenerateTrimsAndKeepsCanonicalAnswer(t *testing.T) {
	m := newFakeModel(t, "```json\n"+`{"tests":[{"name":" Hours ","script":"You are a caller who asks the hours.\n","scoringRubric":"The agent gives them."}]}`+"\n```")
	tests, messages, err := Generator{LLM: m.client}.Generate(t.Context(), agentPrompt, "Hours.", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []GeneratedTest{{Name: "Hours", Script: "You are a caller who asks the hours.", ScoringRubric: "The agent gives them."}}
	if !cmp.Equal(want, tests) {
		t.Errorf("tests = %+v", tests)
	}
	if messages[1].Content != answerOf(t, want) {
		t.Errorf("answer kept as %q, want the accepted tests as JSON", messages[1].Content)
	}
}

func TestGenerateAgentPromptCut(t *testing.T) {
	m := newFakeModel(t, answerOf(t, twoTests), answerOf(t, twoTests))
	prompt := strings.Repeat("x", maxAgentPromptContext+100)
	if _, _, err := (Generator{LLM: m.client}).Generate(t.Context(), prompt, "Hours.", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (Generator{LLM: m.client}).Generate(t.Context(), " ", "Hours.", nil); err != nil {
		t.Fatal(err)
	}
	reqs := m.server.Requests()
	if sys := contents(reqs[0])[0]; !strings.Contains(sys, strings.Repeat("x", maxAgentPromptContext-1)+"…\n</agent_prompt>") {
		t.Errorf("a long agent prompt is not cut to %d characters", maxAgentPromptContext)
	}
	if sys := contents(reqs[1])[0]; !strings.Contains(sys, "<agent_prompt>\n(The agent has no prompt.)\n</agent_prompt>") {
		t.Errorf("an empty agent prompt is not said to be empty:\n%s", sys)
	}
}

func TestGenerateErrors(t *testing.T) {
	_, _, err := Generator{}.Generate(t.Context(), agentPrompt, "Hours.", nil)
	if !errors.Is(err, ErrNoLLM) || err.Error() != "generating tests needs a language model: set --llm-base-url (PARLEY_LLM_BASE_URL)" {
		t.Errorf("no model: err = %v", err)
	}
	m := newFakeModelScript(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}
	})
	g := Generator{LLM: m.client}
	_, _, err = g.Generate(t.Context(), agentPrompt, "Hours.", nil)
	if !errors.Is(err, llm.ErrRejected) || errors.Is(err, ErrMalformedGeneration) || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Errorf("provider refusal: err = %v", err)
	}
	if _, _, err := g.Generate(t.Context(), agentPrompt, "  ", nil); err == nil || !strings.Contains(err.Error(), "prompt") {
		t.Errorf("blank prompt: err = %v", err)
	}
	if _, _, err := g.Generate(t.Context(), agentPrompt, "Hours.", []ChatMessage{{Role: "tool", Content: "x"}}); err == nil {
		t.Error("unknown role: no error")
	}
	if n := len(m.server.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (only the refused one)", n)
	}
}
