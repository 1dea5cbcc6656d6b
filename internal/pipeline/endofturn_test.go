package pipeline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
)

// The end of the caller's turn, per agent (runtimeConfig.endpointing) and
// per the words recognised so far. Every measure is in the fake session's
// frames (the samples the recognizer was given for the utterance), never
// in wall time: the same audio, framed the same way, gives the same VAD
// verdicts however loaded the machine.

var frameSamples = media.FrameSamples(Rate)

// framesOf is how many frames a silence of d takes to end a turn: the turn
// ends on the first frame whose silence reaches d.
func framesOf(d time.Duration) int {
	return int(math.Ceil(float64(d) / float64(media.FrameDuration)))
}

// trimmed is pcm without its leading and trailing near-silence, so a test
// controls the pauses.
func trimmed(pcm []int16) []int16 {
	const quiet = 200
	loud := func(v int16) bool { return v > quiet || v < -quiet }
	i := slices.IndexFunc(pcm, loud)
	if i < 0 {
		return nil
	}
	j := len(pcm) - 1
	for !loud(pcm[j]) {
		j--
	}
	return pcm[i : j+1]
}

func answers(text string) func(llmtest.Request) llmtest.Reply {
	return func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: []string{text}} }
}

// noGreeting has the caller speak first, with the agent's runtimeConfig.
func noGreeting(rc map[string]any) func(*model.Agent) {
	return func(a *model.Agent) {
		a.Config.FirstMessage = nil
		a.Config.RuntimeConfig = rc
	}
}

// utterance runs a call whose caller says pcm then stays silent, and
// returns the samples the recognizer rec was given for the first
// utterance: the speech from the VAD's start, and the silence until the
// turn ended.
func utterance(t *testing.T, rc map[string]any, rec *wordsSTT, pcm []int16) int {
	t.Helper()
	b := newBench(t, noGreeting(rc))
	e := &Engine{LLM: fakeLLM(t, answers("Certainly.")), STT: rec, TTS: instantTTS{}, Store: b.st}
	r := start(t, b, e)
	r.sess.say(append(slices.Clone(pcm), audio.Silence(Rate, 3*time.Second)...))
	return rec.closed(t, 0)
}

// TestAdaptiveEndOfTurn: the same words, judged by what the recognizer
// says so far: a complete sentence ends the turn after minSilenceMs, a
// sentence trailing "and" waits maxSilenceMs, anything else a quarter of
// the way between (the defaults: 300, 1200 and 525 ms).
func TestAdaptiveEndOfTurn(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	speech := trimmed(callerSays(t, "I would like a table for two"))
	complete := utterance(t, nil, newWordsSTT(saying("I would like a table for two.", "I would like a table for two.")), speech)
	undecided := utterance(t, nil, newWordsSTT(saying("i would like a table for two", "i would like a table for two")), speech)
	unfinished := utterance(t, nil, newWordsSTT(saying("i would like a table for two and", "i would like a table for two and")), speech)
	t.Logf("utterance frames: complete %d, undecided %d, unfinished %d", complete/frameSamples, undecided/frameSamples, unfinished/frameSamples)
	if complete%frameSamples != 0 || unfinished%frameSamples != 0 {
		t.Fatalf("utterances of %d and %d samples: not whole frames", complete, unfinished)
	}
	// The speech is the same: the difference is the silence waited.
	check := func(name string, got, base int, want time.Duration) {
		t.Helper()
		if d := (got - base) / frameSamples; d < framesOf(want)-1 || d > framesOf(want)+1 {
			t.Errorf("%s: %d frames more than a complete sentence, want %d (%v more silence)", name, d, framesOf(want), want)
		}
	}
	check("trailing \"and\"", unfinished, complete, 1200*time.Millisecond-300*time.Millisecond)
	check("neither", undecided, complete, 525*time.Millisecond-300*time.Millisecond)
	// The complete sentence waited its minimum, not more: at most the
	// speech, the start run and the 300 ms.
	if max := len(speech) + framesOf(300*time.Millisecond+40*time.Millisecond)*frameSamples; complete > max {
		t.Errorf("a complete sentence's utterance is %d samples, over speech and 300 ms (%d)", complete, max)
	}
}

// TestEndpointingKeys: runtimeConfig.endpointing.minSilenceMs is the
// silence after a complete sentence and, for a recognizer without partial
// text, after every utterance; maxSilenceMs the silence after an
// unfinished one.
func TestEndpointingKeys(t *testing.T) {
	requireSpeech(t)
	speech := trimmed(callerSays(t, "I would like a table for two"))
	endpointing := func(kv ...any) map[string]any {
		ep := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			ep[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"endpointing": ep}
	}
	t.Run("minSilenceMs after a complete sentence", func(t *testing.T) {
		t.Parallel()
		script := saying("A table for two please.", "A table for two please.")
		short := utterance(t, endpointing("minSilenceMs", 200.0), newWordsSTT(script), speech)
		long := utterance(t, endpointing("minSilenceMs", 700.0), newWordsSTT(script), speech)
		if d := (long - short) / frameSamples; d != framesOf(700*time.Millisecond)-framesOf(200*time.Millisecond) {
			t.Errorf("minSilenceMs 700 waited %d frames more than 200, want %d", d, framesOf(700*time.Millisecond)-framesOf(200*time.Millisecond))
		}
	})
	t.Run("maxSilenceMs after an unfinished sentence", func(t *testing.T) {
		t.Parallel()
		script := saying("a table for two and", "a table for two and")
		short := utterance(t, endpointing("maxSilenceMs", 800.0), newWordsSTT(script), speech)
		long := utterance(t, endpointing("maxSilenceMs", 1600.0), newWordsSTT(script), speech)
		if d := (long - short) / frameSamples; d != framesOf(800*time.Millisecond) {
			t.Errorf("maxSilenceMs 1600 waited %d frames more than 800, want %d", d, framesOf(800*time.Millisecond))
		}
	})
	t.Run("minSilenceMs without partial text", func(t *testing.T) {
		t.Parallel()
		heard := func(rc map[string]any) int {
			b := newBench(t, noGreeting(rc))
			rec := &scriptedSTT{texts: []string{"a table for two and"}} // no partials: the words cannot decide
			e := &Engine{LLM: fakeLLM(t, answers("Certainly.")), STT: rec, TTS: instantTTS{}, Store: b.st}
			r := start(t, b, e)
			r.sess.say(append(slices.Clone(speech), audio.Silence(Rate, 3*time.Second)...))
			b.waitEntries(t, 1) // the caller's turn
			rec.mu.Lock()
			defer rec.mu.Unlock()
			return rec.heard[0]
		}
		short, long := heard(endpointing("minSilenceMs", 300.0)), heard(endpointing("minSilenceMs", 900.0))
		if d := (long - short) / frameSamples; d != framesOf(600*time.Millisecond) {
			t.Errorf("minSilenceMs 900 waited %d frames more than 300, want %d", d, framesOf(600*time.Millisecond))
		}
	})
}

// TestAPauseAfterAConjunctionContinuesTheUtterance: "... for two and",
// a 700 ms pause, "a high chair please": the caller is not done, so the
// pause is bridged and the whole is one utterance, one stream and one
// turn. The same audio whose words so far are a complete sentence is two
// utterances.
func TestAPauseAfterAConjunctionContinuesTheUtterance(t *testing.T) {
	requireSpeech(t)
	first := trimmed(callerSays(t, "I would like a table for two and"))
	second := trimmed(callerSays(t, "a high chair please"))
	pause := audio.Silence(Rate, 700*time.Millisecond)
	pcm := slices.Concat(first, pause, second)
	const whole = "I would like a table for two and a high chair please."

	t.Run("unfinished: one utterance", func(t *testing.T) {
		t.Parallel()
		rec := newWordsSTT(wordsScript{
			partials: []partialAt{{0, "i would like a table for two and"}, {len(first) + len(pause) + len(second)/2, "i would like a table for two and a high chair please"}},
			final:    whole,
		})
		b := newBench(t, noGreeting(nil))
		e := &Engine{LLM: fakeLLM(t, answers("Certainly.")), STT: rec, TTS: instantTTS{}, Store: b.st}
		r := start(t, b, e)
		r.sess.say(append(slices.Clone(pcm), audio.Silence(Rate, 3*time.Second)...))
		if n := rec.closed(t, 0); n < len(pcm)-len(first)/2 {
			t.Errorf("the utterance holds %d samples of the %d said", n, len(pcm))
		}
		b.waitEntries(t, 2) // the caller's turn and the reply
		if got := texts(b.stored(t)); got[0] != "user:"+whole {
			t.Errorf("transcript %q", got)
		}
		if n := rec.opened(); n != 1 {
			t.Errorf("%d utterances, want 1", n)
		}
	})
	t.Run("complete: two utterances", func(t *testing.T) {
		t.Parallel()
		rec := newWordsSTT(saying("I would like a table for two.", "I would like a table for two."),
			saying("A high chair please.", "A high chair please."))
		b := newBench(t, noGreeting(nil))
		e := &Engine{LLM: fakeLLM(t, answers("Certainly.")), STT: rec, TTS: instantTTS{}, Store: b.st}
		r := start(t, b, e)
		r.sess.say(append(slices.Clone(pcm), audio.Silence(Rate, 3*time.Second)...))
		if n := rec.closed(t, 0); n > len(first)+len(pause) {
			t.Errorf("the first utterance holds %d samples: it went past the pause", n)
		}
		rec.closed(t, 1)
	})
}

// noisy is pcm at snr dB (RMS over pcm) in white noise, with lead of
// noise alone before it and after it.
func noisy(pcm []int16, snr float64, lead time.Duration) []int16 {
	var e float64
	for _, v := range pcm {
		e += float64(v) * float64(v)
	}
	rms := math.Sqrt(e / float64(len(pcm)))
	const noiseRMS = 300.0
	k := noiseRMS * math.Pow(10, snr/20) / rms
	n := int(lead.Seconds() * Rate)
	out := make([]int16, n+len(pcm)+n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range out {
		v := rng.NormFloat64() * noiseRMS
		if j := i - n; j >= 0 && j < len(pcm) {
			v += float64(pcm[j]) * k
		}
		out[i] = int16(max(math.MinInt16, min(math.MaxInt16, math.Round(v))))
	}
	return out
}

// TestVADSensitivity: runtimeConfig.endpointing.vadSensitivity sets how far
// above the noise speech must be: a caller as loud as the line noise is
// heard at 1 and not at 0.
func TestVADSensitivity(t *testing.T) {
	requireSpeech(t)
	pcm := noisy(callerSays(t, "I would like a table for two tonight please"), 0, 2*time.Second)
	for _, tc := range []struct {
		sensitivity float64
		heard       bool
	}{{1, true}, {0, false}} {
		t.Run(fmt.Sprintf("sensitivity %v", tc.sensitivity), func(t *testing.T) {
			t.Parallel()
			rec := newWordsSTT(saying("A table please.", "A table please."))
			b := newBench(t, noGreeting(map[string]any{"endpointing": map[string]any{"vadSensitivity": tc.sensitivity}}))
			e := &Engine{LLM: fakeLLM(t, answers("Certainly.")), STT: rec, TTS: instantTTS{}, Store: b.st}
			r := start(t, b, e)
			r.sess.say(pcm)
			if tc.heard {
				rec.closed(t, 0)
				return
			}
			// Not heard: once the session has played all of it and 2 s of
			// line time more (frames, not wall time), nothing was opened.
			r.sess.waitFrames(t, len(pcm)/frameSamples+100)
			if n := rec.opened(); n != 0 {
				t.Errorf("sensitivity 0 heard %d utterances in noise as loud as the speech", n)
			}
		})
	}
}
