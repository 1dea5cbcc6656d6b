package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/telephony"
)

// running is a conversation under test on a fake session.
type running struct {
	sess  *fakeSession
	ended chan string
	done  chan struct{}
	out   call.Outcome // what the conversation reported, once done
}

func start(t *testing.T, b bench, e *Engine) *running {
	t.Helper()
	return startOn(t, b, e, newFakeSession())
}

// startOn runs the conversation on sess.
func startOn(t *testing.T, b bench, e *Engine, sess *fakeSession) *running {
	t.Helper()
	r := &running{sess: sess, ended: make(chan string, 1), done: make(chan struct{})}
	live := telephony.NewLive(b.call, b.agent, r.sess, func(cause string) { r.ended <- cause; r.sess.hangup() })
	go func() { r.out = e.Run(context.Background(), live); close(r.done) }()
	t.Cleanup(func() { r.sess.hangup(); <-r.done })
	return r
}

// cause waits for the call to end and returns its cause.
func (r *running) cause(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case c := <-r.ended:
		<-r.done
		return c
	case <-time.After(within):
		t.Fatal("the call did not end")
		return ""
	}
}

// sayTurns has the caller say pcm n times, each once the agent has
// answered the last in full: the greeting first, then perTurn transcript
// entries a turn (an entry lands once its line has played), so a loaded
// machine's slow speech is never talked over.
func (r *running) sayTurns(t *testing.T, b bench, pcm []int16, n, perTurn int) {
	t.Helper()
	b.waitEntries(t, 1)
	for k := 1; k <= n; k++ {
		r.sess.say(pcm)
		if k < n {
			b.waitEntries(t, 1+perTurn*k)
		}
	}
}

func texts(c model.Call) []string {
	var out []string
	for _, e := range c.Transcript {
		out = append(out, e["role"].(string)+":"+str(e["text"])+str(e["tool"]))
	}
	return out
}

func fakeLLM(t *testing.T, script func(llmtest.Request) llmtest.Reply) *openai.Client {
	srv := llmtest.New(t, script)
	return openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", Model: "m", FirstTokenTimeout: time.Second, MaxRetries: -1})
}

func TestMaxDurationEndsWithAClosingLine(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	four := 4
	b := newBench(t, func(a *model.Agent) { a.Config.MaxConversationDurationSeconds = &four })
	e := &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Noted."}} }),
		STT: &scriptedSTT{}, TTS: espeak.New(espeak.Config{}), Store: b.st}
	r := start(t, b, e)
	began := time.Now()
	if c := r.cause(t, 20*time.Second); c != call.CauseMaxDuration {
		t.Fatalf("ended with %s", c)
	}
	// The line starts before the limit (the telephony layer hangs up at it)
	// and plays out in full before the call ends.
	got := texts(b.stored(t))
	if len(got) != 2 || got[1] != "assistant:"+closingLine {
		t.Fatalf("transcript %q", got)
	}
	if played := time.Duration(len(r.sess.playedAudio())) * time.Second / Rate; played < 4*time.Second {
		t.Errorf("played %v of greeting and closing line", played)
	}
	if took := time.Since(began); took < 2*time.Second {
		t.Errorf("the closing line came after %v, before the limit's lead", took)
	}
}

// failingSTT fails every transcription.
type failingSTT struct{}

func (failingSTT) Transcribe(context.Context, []int16, int, string) (stt.Result, error) {
	return stt.Result{}, errors.New("stt: engine unavailable: connection refused")
}

// failingTTS fails every synthesis.
type failingTTS struct{}

func (failingTTS) Synthesize(context.Context, tts.Request, int, func([]int16) error) (tts.Stats, error) {
	return tts.Stats{}, tts.ErrUnavailable
}

func TestProviderFailures(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	t.Run("the model fails: an apology each time, then the call ends FAILED", func(t *testing.T) {
		t.Parallel()
		b := newBench(t)
		e := &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500, Message: "overloaded"} }),
			STT: &scriptedSTT{texts: []string{"one", "two", "three"}}, TTS: espeak.New(espeak.Config{}), Store: b.st}
		r := start(t, b, e)
		r.sayTurns(t, b, callerSays(t, "Hello, is anyone there?"), 3, 2) // what it heard, an apology
		if c := r.cause(t, 40*time.Second); c != providerFailCause {
			t.Fatalf("ended with %s", c)
		}
		got := texts(b.stored(t))
		apologies := 0
		for _, s := range got {
			if strings.HasPrefix(s, "assistant:Sorry, I am having trouble") {
				apologies++
			}
		}
		if apologies != 2 || got[len(got)-1] != "user:three" {
			t.Errorf("transcript %q: want two apologies, then the third failure ends the call", got)
		}
	})
	t.Run("the model hangs: the first-token timeout ends the turn", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, func(a *model.Agent) { a.Config.FirstMessage = nil })
		b.call.FirstMessage = nil
		e := &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Hang: true} }),
			STT: &scriptedSTT{texts: []string{"hello"}}, TTS: espeak.New(espeak.Config{}), Store: b.st}
		r := start(t, b, e)
		r.sess.waitFrames(t, 15) // the call is up: 300 ms of line time
		r.sess.say(callerSays(t, "Hello?"))
		deadline := time.Now().Add(15 * time.Second)
		for len(b.stored(t).Transcript) < 2 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if got := texts(b.stored(t)); len(got) != 2 || !strings.HasPrefix(got[1], "assistant:Sorry, I am having trouble") {
			t.Errorf("transcript %q", got)
		}
	})
	t.Run("recognition fails: the caller is asked again, then the call ends FAILED", func(t *testing.T) {
		t.Parallel()
		b := newBench(t)
		e := &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Yes?"}} }),
			STT: failingSTT{}, TTS: espeak.New(espeak.Config{}), Store: b.st}
		r := start(t, b, e)
		r.sayTurns(t, b, callerSays(t, "Hello, is anyone there?"), 3, 1) // a request to repeat
		if c := r.cause(t, 40*time.Second); c != providerFailCause {
			t.Fatalf("ended with %s", c)
		}
		got := texts(b.stored(t))
		if n := strings.Count(strings.Join(got, "\n"), "assistant:Sorry, I didn't catch that"); n != 2 {
			t.Errorf("transcript %q: want two requests to repeat", got)
		}
	})
	t.Run("synthesis fails: the call ends FAILED instead of staying mute", func(t *testing.T) {
		t.Parallel()
		b := newBench(t)
		e := &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Yes?"}} }),
			STT: &scriptedSTT{}, TTS: failingTTS{}, Store: b.st}
		r := start(t, b, e)
		if c := r.cause(t, 10*time.Second); c != providerFailCause {
			t.Fatalf("ended with %s", c)
		}
	})
	t.Run("no model configured: the call ends FAILED at the first turn that needs it", func(t *testing.T) {
		t.Parallel()
		dynamic := "dynamic"
		b := newBench(t, func(a *model.Agent) { a.Config.FirstMessageMode = &dynamic })
		e := &Engine{STT: &scriptedSTT{}, TTS: espeak.New(espeak.Config{}), Store: b.st}
		r := start(t, b, e)
		if c := r.cause(t, 5*time.Second); c != providerFailCause {
			t.Fatalf("ended with %s", c)
		}
	})
}
