package pipeline

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/webhook"
)

// recordingTTS is espeak-ng that remembers what it was asked to say and
// how much audio each text made.
type recordingTTS struct {
	tts.Synthesizer
	mu      sync.Mutex
	said    []string
	samples map[string]int
}

func (r *recordingTTS) Synthesize(ctx context.Context, req tts.Request, rate int, out func([]int16) error) (tts.Stats, error) {
	n := 0
	st, err := r.Synthesizer.Synthesize(ctx, req, rate, func(p []int16) error { n += len(p); return out(p) })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.said = append(r.said, req.Text)
	if r.samples == nil {
		r.samples = map[string]int{}
	}
	r.samples[req.Text] = n
	return st, err
}

func (r *recordingTTS) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.said)
}

// fillerCall is a call in which the caller asks for something and the
// model calls the custom tool "check" waits times, then says "Done.". The
// tool's webhook answers once hold returns; hold is given the session and
// the audio played when the request came.
type fillerCall struct {
	b      bench
	r      *running
	tts    *recordingTTS
	model  *llmtest.Server
	mu     sync.Mutex
	played []int // samples played when each tool request came
}

func startFillerCall(t *testing.T, rc map[string]any, waits int, hold func(sess *fakeSession, played int)) *fillerCall {
	t.Helper()
	fc := &fillerCall{tts: &recordingTTS{Synthesizer: espeak.New(espeak.Config{})}}
	sess := newFakeSession()
	recv := newToolReceiver(t, func(w http.ResponseWriter) {
		p := len(sess.playedAudio())
		fc.mu.Lock()
		fc.played = append(fc.played, p)
		fc.mu.Unlock()
		hold(sess, p)
		io.WriteString(w, `{"available":true}`)
	})
	fc.b = newBench(t, func(a *model.Agent) { a.Config.RuntimeConfig = rc })
	fc.b.addTool(t, model.CustomTool{Name: "check", WebhookURL: recv.URL})
	fc.model = llmtest.New(t, func(req llmtest.Request) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Reply{Text: []string{"Summary."}}
		}
		results := 0
		for _, m := range req.Messages {
			if m["role"] == "tool" {
				results++
			}
		}
		if results < waits {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "c" + string(rune('1'+results)), Name: "check", Arguments: `{}`}}}
		}
		return llmtest.Reply{Text: []string{"Done."}}
	})
	e := &Engine{LLM: openai.New(openai.Config{BaseURL: fc.model.URL, APIKey: "k", Model: "m", MaxRetries: -1}),
		STT: &scriptedSTT{texts: []string{"Please check"}}, TTS: fc.tts, Store: fc.b.st,
		Webhooks: webhook.New(webhook.Options{AllowPrivate: true})}
	fc.r = startOn(t, fc.b, e, sess)
	fc.b.waitEntries(t, 1) // the greeting
	sess.say(callerSays(t, "Please check."))
	deadline := time.Now().Add(60 * time.Second)
	for {
		c := fc.b.stored(t)
		if n := len(c.Transcript); n > 0 && c.Transcript[n-1]["text"] == "Done." {
			return fc
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end with Done.: %q", texts(c))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fillers are the call's filler entries.
func (fc *fillerCall) fillers(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, e := range fc.b.stored(t).Transcript {
		if e["type"] == "filler" {
			out = append(out, e)
		}
	}
	return out
}

// heardFiller holds the tool until the caller has heard 200 ms of filler,
// then for 2 s more of line time, long enough for a second filler if the
// engine played one.
func heardFiller(sess *fakeSession, played int) {
	deadline := time.Now().Add(60 * time.Second)
	for len(sess.playedAudio()) < played+Rate/5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	n := sess.framesMade() + 100
	for sess.framesMade() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFillerWhileASlowToolRuns(t *testing.T) {
	requireSpeech(t)
	t.Run("a phrase per wait, in turn, never in the model's history", func(t *testing.T) {
		t.Parallel()
		phrases := []any{"Hang on a moment.", "Still looking."}
		fc := startFillerCall(t, map[string]any{"filler": map[string]any{"afterMs": 300, "phrases": phrases}}, 2, heardFiller)
		got := texts(fc.b.stored(t))
		want := []string{"assistant:Hello, this is Parley.", "user:Please check",
			"assistant:Hang on a moment.", "tool:map[args:{} name:check]",
			"assistant:Still looking.", "tool:map[args:{} name:check]", "assistant:Done."}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("transcript %q, want %q", got, want)
		}
		for i, f := range fc.fillers(t) {
			if f["role"] != "assistant" || f["text"] != phrases[i] || f["turnId"] != "turn-1" || f["sound"] != nil {
				t.Errorf("filler entry %v", f)
			}
		}
		if said := fc.tts.texts(); slices.Index(said, "Hang on a moment.") < 0 || slices.Index(said, "Still looking.") < 0 {
			t.Errorf("spoken %q", said)
		}
		// The model never sees a filler as something it said.
		for _, req := range fc.model.Requests() {
			for _, m := range req.Messages {
				if c, _ := m["content"].(string); m["role"] == "assistant" && (strings.Contains(c, "Hang on") || strings.Contains(c, "Still looking")) {
					t.Errorf("the model was told it said %q", c)
				}
			}
		}
	})
	t.Run("a soft sound, stopped when the tool answers", func(t *testing.T) {
		t.Parallel()
		fc := startFillerCall(t, map[string]any{"filler": map[string]any{"afterMs": 300, "sound": "soft"}}, 1, heardFiller)
		f := fc.fillers(t)
		if len(f) != 1 || f[0]["sound"] != "soft" || f[0]["text"] != nil || f[0]["role"] != "assistant" {
			t.Fatalf("filler entries %v", f)
		}
		if said := fc.tts.texts(); len(said) != 2 || said[0] != "Hello, this is Parley." || said[1] != "Done." {
			t.Errorf("speech synthesized %q: the sound is generated, not spoken", said)
		}
		// Heard from the tool request to "Done.": some of the sound, not
		// its whole 8 s. It stopped when the tool answered.
		fc.mu.Lock()
		p0 := fc.played[0]
		fc.mu.Unlock()
		fc.tts.mu.Lock()
		done := fc.tts.samples["Done."]
		fc.tts.mu.Unlock()
		played := fc.r.sess.playedAudio()
		sound := played[p0 : len(played)-done]
		if len(sound) < Rate/5 || len(sound) > 6*Rate {
			t.Errorf("%v of the soft sound played; want some, well under its %v", time.Duration(len(sound))*time.Second/Rate, softSoundLength)
		}
		peak := 0
		for _, v := range sound {
			peak = max(peak, int(v), -int(v))
		}
		if peak == 0 || peak > 1000 {
			t.Errorf("the soft sound peaks at %d of 32767", peak)
		}
	})
	t.Run("the caller starts talking: the filler stops", func(t *testing.T) {
		t.Parallel()
		mm := trimmed(callerSays(t, "Mm."))
		talkOver := func(sess *fakeSession, played int) {
			heardFiller(sess, played)
			sess.say(mm)
			deadline := time.Now().Add(60 * time.Second)
			for sess.queuedOut() > 0 && time.Now().Before(deadline) { // flushed, or played out
				time.Sleep(10 * time.Millisecond)
			}
		}
		fc := startFillerCall(t, map[string]any{"filler": map[string]any{"afterMs": 300, "sound": "soft"}}, 1, talkOver)
		fc.mu.Lock()
		p0 := fc.played[0]
		fc.mu.Unlock()
		fc.tts.mu.Lock()
		done := fc.tts.samples["Done."]
		fc.tts.mu.Unlock()
		if sound := len(fc.r.sess.playedAudio()) - p0 - done; sound > 6*Rate {
			t.Errorf("%v of the sound played: it went on over the caller", time.Duration(sound)*time.Second/Rate)
		}
	})
	// A wait of 1.5 s of line time: no filler when they are off, nor when
	// afterMs is longer than the wait.
	quiet := func(sess *fakeSession, played int) {
		n := sess.framesMade() + 75
		deadline := time.Now().Add(60 * time.Second)
		for sess.framesMade() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	for name, filler := range map[string]map[string]any{
		"filler.enabled false: the caller waits in silence": {"afterMs": 300, "enabled": false},
		"filler.afterMs longer than the wait: silence":      {"afterMs": 8000},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fc := startFillerCall(t, map[string]any{"filler": filler}, 1, quiet)
			if f := fc.fillers(t); len(f) != 0 {
				t.Errorf("filler entries %v", f)
			}
			fc.mu.Lock()
			p0 := fc.played[0]
			fc.mu.Unlock()
			fc.tts.mu.Lock()
			done := fc.tts.samples["Done."]
			fc.tts.mu.Unlock()
			if gap := len(fc.r.sess.playedAudio()) - p0 - done; gap != 0 {
				t.Errorf("%d samples played while the tool ran", gap)
			}
		})
	}
}

// slowRetriever answers a search only once the caller has heard 200 ms
// of filler.
type slowRetriever struct {
	Retriever
	sess *fakeSession
}

func (s slowRetriever) Retrieve(ctx context.Context, orgID string, kbIDs []string, query string, k int, threshold float64) ([]knowledge.Hit, error) {
	played := len(s.sess.playedAudio())
	for len(s.sess.playedAudio()) < played+Rate/5 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	return s.Retriever.Retrieve(ctx, orgID, kbIDs, query, k, threshold)
}

// The model's knowledge search waits like any tool: the caller hears a
// filler, then the answer.
func TestFillerWhileTheKnowledgeBaseIsSearched(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	mode := "query_tool"
	b := newBench(t, func(a *model.Agent) {
		a.Config.KnowledgeBaseRetrievalMode = &mode
		a.Config.RuntimeConfig = map[string]any{"filler": map[string]any{"afterMs": 200}}
	})
	sess := newFakeSession()
	e := &Engine{Knowledge: slowRetriever{withKnowledgeBase(t, b), sess}, STT: &scriptedSTT{texts: []string{"Can I bring wine"}},
		TTS: espeak.New(espeak.Config{}), Store: b.st}
	e.LLM = fakeLLM(t, func(req llmtest.Request) llmtest.Reply {
		switch last := req.Messages[len(req.Messages)-1]; {
		case len(req.Tools) == 0:
			return llmtest.Reply{Text: []string{"Summary."}}
		case last["role"] == "tool":
			return llmtest.Reply{Text: []string{"Yes, corkage is 15 dollars."}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCallReply{{ID: "s1", Name: "search_knowledge_base", Arguments: `{"query":"wine"}`}}}
	})
	startOn(t, b, e, sess)
	b.waitEntries(t, 1) // the greeting
	sess.say(callerSays(t, "Can I bring wine?"))
	b.waitEntries(t, 5)
	got := texts(b.stored(t))
	want := []string{"assistant:Hello, this is Parley.", "user:Can I bring wine", "assistant:One moment.",
		`tool:map[args:{"query":"wine"} name:search_knowledge_base]`, "assistant:Yes, corkage is 15 dollars."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("transcript %q, want %q", got, want)
	}
	if tr := b.stored(t).Transcript; tr[2]["type"] != "filler" {
		t.Errorf("entry %v is not a filler", tr[2])
	}
}
