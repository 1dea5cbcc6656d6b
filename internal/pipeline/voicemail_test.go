package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// A synthetic answering machine: an espeak-ng greeting, a pause, a beep.
func machineGreeting(t *testing.T) []int16 {
	pcm := callerSays(t, "Hi, you have reached Ada Lovelace. I can't take your call right now. Please leave a message after the tone.")
	pcm = append(pcm, audio.Silence(Rate, 300*time.Millisecond)...)
	return append(pcm, audio.Tone(1000, Rate, 500*time.Millisecond, 0.5)...)
}

func TestVoicemail(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	yes, hangup, leave := true, "hangup", "leave_message"
	message := "Hi {{name}}, this is Luigi's restaurant. Please call us back."
	outbound := func(action *string) bench {
		b := newBench(t, func(a *model.Agent) {
			a.Config.VoicemailEnabled, a.Config.VoicemailAction, a.Config.VoicemailMessage = &yes, action, &message
		})
		b.call.Direction, b.call.Variables = model.Outbound, map[string]any{"name": "Ada"}
		return b
	}
	engine := func(b bench, heard string) *Engine {
		return &Engine{LLM: fakeLLM(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{"Hello Ada!"}} }),
			STT: &scriptedSTT{texts: []string{heard}}, TTS: espeak.New(espeak.Config{}), Store: b.st}
	}
	t.Run("hang up on a machine", func(t *testing.T) {
		t.Parallel()
		b := outbound(&hangup)
		r := start(t, b, engine(b, "hi you have reached ada lovelace"))
		r.sess.say(machineGreeting(t))
		if c := r.cause(t, 20*time.Second); c != call.CauseVoicemail {
			t.Fatalf("ended %s", c)
		}
		if played := r.sess.playedAudio(); audio.RMS(played) > 0 {
			t.Errorf("the agent spoke to the machine (%d samples)", len(played))
		}
		for _, e := range b.stored(t).Transcript {
			if e["role"] == "assistant" {
				t.Errorf("assistant entry %v", e)
			}
		}
	})
	t.Run("leave a message after the beep", func(t *testing.T) {
		t.Parallel()
		b := outbound(&leave)
		r := start(t, b, engine(b, "hi you have reached ada lovelace"))
		greeting := machineGreeting(t)
		r.sess.say(greeting)
		if c := r.cause(t, 30*time.Second); c != call.CauseVoicemail {
			t.Fatalf("ended %s", c)
		}
		got := texts(b.stored(t))
		if last := got[len(got)-1]; last != "assistant:Hi Ada, this is Luigi's restaurant. Please call us back." {
			t.Errorf("transcript %q", got)
		}
		// The message starts after the beep, not over the greeting.
		r.sess.mu.Lock()
		began := r.sess.firstOut.Sub(r.sess.start)
		r.sess.mu.Unlock()
		if greetingLasts := time.Duration(len(greeting)) * time.Second / Rate; began < greetingLasts {
			t.Errorf("the message began %v into the call, before the greeting and beep (%v) were over", began, greetingLasts)
		}
		if played := r.sess.playedAudio(); len(played) < Rate {
			t.Errorf("%d samples of message", len(played))
		}
	})
	t.Run("a person answers: the greeting plays after their hello", func(t *testing.T) {
		t.Parallel()
		b := outbound(&hangup)
		r := start(t, b, engine(b, "hello"))
		r.sess.say(callerSays(t, "Hello?"))
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && len(b.stored(t).Transcript) < 2 {
			time.Sleep(100 * time.Millisecond)
		}
		r.sess.waitFrames(t, r.sess.framesMade()+50) // a second of line time more
		r.sess.hangup()
		<-r.done
		got := texts(b.stored(t))
		if len(got) < 2 || !strings.HasPrefix(got[0], "user:") || got[1] != "assistant:Hello, this is Parley." {
			t.Errorf("transcript %q", got)
		}
	})
}
