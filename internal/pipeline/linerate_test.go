package pipeline

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
	"github.com/parley-voice/parley/internal/telephony"
)

// rates records the sample rates a provider was asked for.
type rates struct {
	mu  sync.Mutex
	got []int
}

func (r *rates) add(rate int) {
	r.mu.Lock()
	r.got = append(r.got, rate)
	r.mu.Unlock()
}

func (r *rates) all() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

type rateSTT struct {
	scriptedSTT
	rates
}

func (s *rateSTT) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	s.add(rate)
	return s.scriptedSTT.Transcribe(ctx, pcm, rate, language)
}

type rateTTS struct {
	instantTTS
	rates
}

func (s *rateTTS) Synthesize(ctx context.Context, r tts.Request, rate int, out func([]int16) error) (tts.Stats, error) {
	s.add(rate)
	return s.instantTTS.Synthesize(ctx, r, rate, out)
}

// TestNarrowbandLine runs a turn on an 8 kHz leg, as G.711 carries it: the
// engine reads and writes the leg at its own rate (nothing is resampled
// for the VAD or the line), and the recognizer and the synthesizer work at
// it too, so each resamples at most once, itself, when its model wants
// another rate.
func TestNarrowbandLine(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	const line = 8000
	b := newBench(t)
	recognizer := &rateSTT{scriptedSTT: scriptedSTT{texts: []string{"A table for two"}}}
	voice := &rateTTS{}
	e := &Engine{LLM: delayedLLM{"Certainly."}, STT: recognizer, TTS: voice, Store: b.st}
	sess := newFakeSessionAt(line, time.Millisecond*5)
	live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
	live.Rate = line
	done := make(chan struct{})
	go func() { e.Run(context.Background(), live); close(done) }()
	defer func() { sess.hangup(); <-done }()

	b.waitEntries(t, 1) // the greeting
	var said []int16
	_, err := espeak.New(espeak.Config{}).Synthesize(context.Background(), ttsRequest("I would like a table for two tonight."), line,
		func(p []int16) error { said = append(said, p...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	sess.say(said)
	b.waitEntries(t, 3) // the caller's turn and the answer

	if got := sess.askedRates(); len(got) == 0 || slices.ContainsFunc(got, func(r int) bool { return r != line }) {
		t.Errorf("the leg's audio was asked at %v Hz, want %d only", got, line)
	}
	if got := recognizer.all(); len(got) != 1 || got[0] != line {
		t.Errorf("the recognizer was given %v Hz, want [%d]", got, line)
	}
	if got := voice.all(); len(got) < 2 || slices.ContainsFunc(got, func(r int) bool { return r != line }) {
		t.Errorf("speech was synthesized at %v Hz, want %d for the greeting and the answer", got, line)
	}
	recognizer.scriptedSTT.mu.Lock()
	heard := recognizer.heard
	recognizer.scriptedSTT.mu.Unlock()
	if len(heard) != 1 || heard[0] < line/2 {
		t.Errorf("the recognizer heard %v samples, want the utterance", heard)
	}
}
