package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/telephony"
)

// TestInterruptionsNeedRealWords: with a recognizer that says its words as
// they come, caller speech longer than the interruption threshold stops
// the agent only once it holds interruption.minWords real words (default
// 2): "uh-huh" over the agent's greeting never stops it, "wait, stop
// please" does. minWords 0 is the duration alone.
func TestInterruptionsNeedRealWords(t *testing.T) {
	requireSpeech(t)
	greeting := "Thank you for calling the restaurant. Tonight we have three specials: the soup of the day, a fish course, and a chocolate cake."
	// Well over the 500 ms threshold: by duration alone it interrupts.
	words := trimmed(callerSays(t, "Wait, stop, please, hold on."))
	for _, tc := range []struct {
		name      string
		rc        map[string]any
		heard     wordsScript
		interrupt bool
	}{
		{"uh-huh does not stop the agent", nil, saying("uh-huh", "Uh-huh."), false},
		{"mm-hm yeah okay does not either", nil, saying("mm-hm yeah okay", "Mm-hm, yeah, okay."), false},
		{"wait stop please does", nil, saying("wait stop please", "Wait, stop, please."), true},
		{"minWords 0: duration alone", map[string]any{"interruption": map[string]any{"minWords": 0}}, saying("uh-huh", "Uh-huh."), true},
		{"minWords 4: three words are not enough", map[string]any{"interruption": map[string]any{"minWords": 4}},
			saying("wait stop please", "Wait, stop, please."), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, func(a *model.Agent) {
				a.Config.FirstMessage = &greeting
				a.Config.RuntimeConfig = tc.rc
			})
			rec := newWordsSTT(tc.heard)
			e := &Engine{LLM: fakeLLM(t, answers("Of course.")), STT: rec, TTS: espeak.New(espeak.Config{}), Store: b.st}
			sess := newFakeSession()
			live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
			done := make(chan struct{})
			var out call.Outcome
			go func() { out = e.Run(context.Background(), live); close(done) }()
			defer func() { sess.hangup(); <-done }()
			deadline := time.Now().Add(30 * time.Second)
			for len(sess.playedAudio()) < Rate && time.Now().Before(deadline) { // a second of the greeting
				time.Sleep(20 * time.Millisecond)
			}
			sess.say(words)
			rec.closed(t, 0) // the caller's utterance is over
			if tc.interrupt {
				b.waitEntries(t, 3) // the cut greeting, the caller, the reply
				got := b.stored(t).Transcript
				if got[0]["interrupted"] != true || got[1]["role"] != "user" || got[1]["text"] != tc.heard.final {
					t.Errorf("transcript %q: want the greeting cut by %q", texts(b.stored(t)), tc.heard.final)
				}
				return
			}
			b.waitEntries(t, 1) // the greeting, played in full
			sess.hangup()
			<-done
			c := b.ended(t, out)
			if len(c.Transcript) != 1 || c.Transcript[0]["text"] != greeting || c.Transcript[0]["interrupted"] != nil {
				t.Errorf("transcript %q: want the whole greeting and nothing else", texts(c))
			}
			// The utterance was recognised (its audio counted) and dropped
			// as a backchannel, not cut off by the end of the call.
			if d, _ := c.Metrics["stt_audio_duration"].(float64); d < 0.5 {
				t.Errorf("stt_audio_duration %v: the utterance's text never reached the conversation", c.Metrics["stt_audio_duration"])
			}
			if stops, _ := c.Metrics["interruption_stop_ms"].([]any); len(stops) != 0 {
				t.Errorf("interruption_stop_ms %v", stops)
			}
			if strings.Contains(strings.Join(texts(c), "|"), "Of course") {
				t.Errorf("the agent answered a backchannel: %q", texts(c))
			}
		})
	}
}
