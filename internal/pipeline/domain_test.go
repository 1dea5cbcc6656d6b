package pipeline

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// domainFlow is a small valid flow whose texts a domain must carry.
func domainFlow() map[string]any {
	return map[string]any{
		"globalPrompt": "You are the front desk of Acme Dental.",
		"startNodeId":  "greet",
		"nodes": []any{
			map[string]any{"id": "greet", "type": "conversation", "instruction": "Ask whether the caller wants a cleaning or a filling.",
				"edges": []any{map[string]any{"target": "age", "condition": "The caller wants an appointment"}}},
			map[string]any{"id": "age", "type": "extract", "instruction": "Find the caller's age.",
				"variables": []any{map[string]any{"name": "treatment", "type": "string", "description": "The treatment wanted",
					"enum": []any{"cleaning", "whitening"}}},
				"edges": []any{map[string]any{"target": "bye"}}},
			map[string]any{"id": "bye", "type": "end", "text": "Thanks for calling Acme Dental."},
		},
	}
}

func TestAgentDomain(t *testing.T) {
	greeting, overrides := "Hello, Acme Dental.", "Hang up when the caller says goodbye."
	desc := "Books an appointment in the practice calendar"
	a := model.Agent{Mode: model.ModeConversationFlow, Config: model.AgentConfig{
		PromptTemplate: "You book appointments for {{clinic}}.", FirstMessage: &greeting, EndCallRulesOverride: &overrides,
		DefaultVariables: map[string]any{"clinic": "Acme Dental"},
		TransferRoutes:   []model.TransferRoute{{ToNumber: "+15550001111", Condition: "The caller has a toothache emergency"}},
		FlowDefinition:   domainFlow(),
	}}
	tools := []model.CustomTool{{Name: "book", Description: &desc, Schema: map[string]any{"type": "object",
		"properties": map[string]any{"dentist": map[string]any{"type": "string", "description": "Dentist's surname", "enum": []any{"Molar", "Incisor"}}}}}}
	d := agentDomain(a, tools, []string{"Prices", "A cleaning costs ninety dollars."})
	all := strings.Join(d.Texts, "\n")
	for _, want := range []string{"You book appointments for {{clinic}}.", greeting, overrides, "Acme Dental",
		"The caller has a toothache emergency", "You are the front desk of Acme Dental.", "Ask whether the caller wants a cleaning",
		"The caller wants an appointment", "Find the caller's age.", "The treatment wanted", "whitening",
		"Thanks for calling Acme Dental.", desc, "Dentist's surname", "Incisor", "A cleaning costs ninety dollars."} {
		if !strings.Contains(all, want) {
			t.Errorf("the domain lacks %q:\n%s", want, all)
		}
	}
	if slices.Contains(d.Texts, "") {
		t.Errorf("empty texts in %q", d.Texts)
	}
	if again := agentDomain(a, tools, []string{"Prices", "A cleaning costs ninety dollars."}); again.Key != d.Key || len(d.Key) != 32 {
		t.Errorf("keys %q and %q of the same agent", d.Key, again.Key)
	}
	// Any edit, the agent's or its knowledge's, is a new domain.
	edited := a
	edited.Config.PromptTemplate += " Be brief."
	if agentDomain(edited, tools, []string{"Prices", "A cleaning costs ninety dollars."}).Key == d.Key {
		t.Error("an edited prompt kept the domain's key")
	}
	if agentDomain(a, tools, []string{"Prices", "A cleaning costs eighty dollars."}).Key == d.Key {
		t.Error("edited knowledge kept the domain's key")
	}
	// A single-prompt agent's stored flowDefinition is not what it talks about.
	a.Mode = model.ModeSinglePrompt
	if strings.Contains(strings.Join(agentDomain(a, nil, nil).Texts, "\n"), "front desk") {
		t.Error("a single_prompt agent's flowDefinition is in its domain")
	}
}

// adaptingSTT is a recognizer that adapts: before Adapt returns, it hears
// "generic"; the recognizer Adapt returns hears "adapted".
type adaptingSTT struct {
	mu      sync.Mutex
	domains []stt.Domain
	adapted stt.Recognizer
	ready   chan struct{} // closed by the test to let Adapt return
}

func (a *adaptingSTT) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	return stt.Result{Text: "generic", Language: "en"}, nil
}

func (a *adaptingSTT) Adapt(ctx context.Context, d stt.Domain) (stt.Recognizer, error) {
	a.mu.Lock()
	a.domains = append(a.domains, d)
	a.mu.Unlock()
	select {
	case <-a.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return a.adapted, nil
}

func (a *adaptingSTT) asked() []stt.Domain {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.domains)
}

// The conversation adapts the recognizer to its agent, with the agent's
// knowledge, without holding up the greeting, and hears the caller with
// the adapted recognizer once it is ready.
func TestConversationAdaptsTheRecognizer(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	b := newBench(t)
	rec := &adaptingSTT{adapted: &scriptedSTT{texts: []string{"adapted"}}, ready: make(chan struct{})}
	e := &Engine{Knowledge: withKnowledgeBase(t, b), STT: rec, TTS: espeak.New(espeak.Config{}), Store: b.st}
	var mu sync.Mutex
	var heard []string
	e.LLM = fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
		if m := req.Messages[len(req.Messages)-1]; m["role"] == "user" && len(req.Tools) > 0 {
			mu.Lock()
			heard = append(heard, m["content"].(string))
			mu.Unlock()
		}
		return llmtest.Reply{Text: []string{"Sure."}}
	})
	r := start(t, b, e)
	b.waitEntries(t, 1) // the greeting played while Adapt was still building
	d := rec.asked()
	if len(d) != 1 || !strings.Contains(strings.Join(d[0].Texts, "\n"), "You take restaurant bookings.") ||
		!strings.Contains(strings.Join(d[0].Texts, "\n"), "corkage is 15 dollars per bottle") {
		t.Fatalf("Adapt was asked for %v", d)
	}
	r.sess.say(callerSays(t, "Are you open on Mondays?"))
	waitFor(t, "the first turn", func() bool { mu.Lock(); defer mu.Unlock(); return len(heard) == 1 })
	close(rec.ready)
	// The loop takes the adapted recognizer at its next frame; a turn
	// heard whole (this recognizer does not stream) takes the one ready
	// when it ends.
	waitFor(t, "the turn to be answered", func() bool { return len(b.stored(t).Transcript) >= 3 })
	for i := 0; ; i++ {
		r.sess.say(callerSays(t, "What about Sundays?"))
		waitFor(t, "the next turn", func() bool { mu.Lock(); defer mu.Unlock(); return len(heard) == i+2 })
		mu.Lock()
		last := heard[len(heard)-1]
		mu.Unlock()
		if last == "adapted" {
			break
		}
		if i == 3 {
			t.Fatalf("the caller is still heard by the unadapted recognizer: %q", heard)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if heard[0] != "generic" {
		t.Errorf("heard %q: the first turn came before the adapted recognizer", heard)
	}
}

// adaptingStreamer is a streaming recognizer that adapts: its own streams
// say "generic", those of the recognizer Adapt returns (once ready is
// closed) "adapted".
type adaptingStreamer struct {
	*wordsSTT
	adapted *wordsSTT
	ready   chan struct{}
}

func (a *adaptingStreamer) Adapt(ctx context.Context, d stt.Domain) (stt.Recognizer, error) {
	select {
	case <-a.ready:
		return a.adapted, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hearFirstTurn runs a call on rec, has the caller say one thing after the
// greeting and returns the text the model was given for it.
func hearFirstTurn(t *testing.T, e *Engine) string {
	t.Helper()
	b := newBench(t)
	e.Store, e.TTS = b.st, espeak.New(espeak.Config{})
	heard := make(chan string, 4)
	e.LLM = fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
		if m := req.Messages[len(req.Messages)-1]; m["role"] == "user" && len(req.Tools) > 0 {
			heard <- m["content"].(string)
		}
		return llmtest.Reply{Text: []string{"Sure."}}
	})
	r := start(t, b, e)
	b.waitEntries(t, 1)
	r.sess.say(callerSays(t, "Are you open on Mondays?"))
	select {
	case text := <-heard:
		return text
	case <-time.After(60 * time.Second):
		t.Fatal("the caller's turn never reached the model")
		return ""
	}
}

// A caller who starts speaking while the recognizer is still being
// adapted to the agent is heard by the adapted recognizer once it is
// ready: the utterance's audio waits for it (from its first frame), not
// the generic model.
func TestUtteranceWaitsForTheAdaptedRecognizer(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	rec := &adaptingStreamer{wordsSTT: newWordsSTT(saying("generic", "generic")),
		adapted: newWordsSTT(saying("adapted", "adapted")), ready: make(chan struct{})}
	var once sync.Once
	e := &Engine{STT: rec}
	// Adapt returns only once the caller's utterance waits for it.
	e.onAwaitAdapted = func() { once.Do(func() { close(rec.ready) }) }
	if text := hearFirstTurn(t, e); text != "adapted" {
		t.Errorf("the first turn was heard as %q, want the adapted recognizer's", text)
	}
	if n := rec.opened(); n != 0 {
		t.Errorf("%d streams opened on the generic recognizer", n)
	}
	if n := rec.adapted.closed(t, 0); n < 8000/2 {
		t.Errorf("the adapted recognizer got %d samples of the utterance", n)
	}
}

// An utterance whose adapted recognizer is not ready by its end is heard
// by the generic one then, rather than waiting on.
func TestUtteranceFallsBackWhenAdaptationLags(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	rec := &adaptingStreamer{wordsSTT: newWordsSTT(saying("generic", "generic")),
		adapted: newWordsSTT(saying("adapted", "adapted")), ready: make(chan struct{})}
	if text := hearFirstTurn(t, &Engine{STT: rec}); text != "generic" {
		t.Errorf("the first turn was heard as %q, want the generic recognizer's", text)
	}
}
