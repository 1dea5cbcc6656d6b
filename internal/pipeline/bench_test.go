package pipeline

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/telephony"
)

// Fake providers with fixed delays, in process: what remains of a turn's
// latency once their delays and the endpointing window are taken out is
// Parley's own.
const (
	fakeSTTDelay = 20 * time.Millisecond
	fakeLLMDelay = 50 * time.Millisecond
	fakeTTSDelay = 30 * time.Millisecond
)

type delayedSTT struct{}

func (delayedSTT) Transcribe(ctx context.Context, pcm []int16, rate int, _ string) (stt.Result, error) {
	time.Sleep(fakeSTTDelay)
	return stt.Result{Text: "I would like a table for two", Language: "en", Audio: stt.Duration(len(pcm), rate)}, nil
}

type delayedLLM struct{ text string }

func (l delayedLLM) Stream(ctx context.Context, _ llm.Request, onText func(string) error) (llm.Result, error) {
	time.Sleep(fakeLLMDelay)
	if err := onText(l.text); err != nil {
		return llm.Result{}, err
	}
	return llm.Result{Text: l.text, FinishReason: "stop"}, nil
}

// toneTTS answers each sentence with a tone of length per character.
type toneTTS struct{ perChar time.Duration }

func (s toneTTS) Synthesize(ctx context.Context, r tts.Request, rate int, out func([]int16) error) (tts.Stats, error) {
	time.Sleep(fakeTTSDelay)
	d := time.Duration(len(r.Text)) * s.perChar
	if err := out(audio.Tone(220, rate, d, 0.3)); err != nil {
		return tts.Stats{}, err
	}
	return tts.Stats{Characters: len(r.Text), Audio: d}, nil
}

// benchCall runs one conversation on a session clocked at tick per frame.
func benchCall(b *testing.B, e *Engine, tick time.Duration, mods ...func(*model.Agent)) (*fakeSession, func()) {
	bn := newBench(b, mods...)
	e.Store = bn.st
	sess := newFakeSessionTick(tick)
	live := telephony.NewLive(bn.call, bn.agent, sess, func(string) { sess.hangup() })
	done := make(chan struct{})
	go func() { e.Run(context.Background(), live); close(done) }()
	return sess, func() { sess.hangup(); <-done }
}

func percentile(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkTurnOverhead plays b.N caller turns (run it with -benchtime
// 200x or more) on a session clocked 10× faster than real time, with
// fake providers of fixed delay, and reports Parley's own share of each
// turn: from the end of the caller's speech to the agent's first audio on
// the line, less the endpointing window and the providers' time. With 100
// turns or more it also reports the first 50 turns against the last 50,
// the mean share and the allocations per turn (the whole process's: the
// engine, the fakes and the store's transcript writes), which stay flat
// when nothing a turn does grows with the conversation.
func BenchmarkTurnOverhead(b *testing.B) {
	if espeakMissing() {
		b.Skip("espeak-ng is missing")
	}
	utterance := append(benchSpeech(b), audio.Silence(Rate, 500*time.Millisecond)...)
	var mu sync.Mutex
	var overhead, response []float64
	turns := make(chan struct{}, 1)
	e := &Engine{LLM: delayedLLM{"Certainly, a table for two."}, STT: delayedSTT{}, TTS: toneTTS{perChar: 5 * time.Millisecond}}
	e.onTurn = func(f map[string]float64) {
		mu.Lock()
		overhead = append(overhead, f["overhead_ms"])
		response = append(response, f["first_audio_ms"]-f["endpointing_ms"])
		mu.Unlock()
		turns <- struct{}{}
	}
	sess, stop := benchCall(b, e, 2*time.Millisecond, func(a *model.Agent) { a.Config.FirstMessage = nil })
	defer stop()
	allocs := make([]uint64, 0, b.N) // allocations during each turn
	bytes := make([]uint64, 0, b.N)
	var ms runtime.MemStats
	b.ResetTimer()
	for range b.N {
		runtime.ReadMemStats(&ms)
		m0, b0 := ms.Mallocs, ms.TotalAlloc
		sess.say(utterance)
		select {
		case <-turns:
		case <-time.After(10 * time.Second):
			b.Fatal("no turn")
		}
		deadline := time.Now().Add(5 * time.Second)
		for sess.busy() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		runtime.ReadMemStats(&ms)
		allocs, bytes = append(allocs, ms.Mallocs-m0), append(bytes, ms.TotalAlloc-b0)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	b.ReportMetric(percentile(overhead, 0.5), "overhead-p50-ms")
	b.ReportMetric(percentile(overhead, 0.99), "overhead-p99-ms")
	b.ReportMetric(percentile(response, 0.5), "endpoint-to-audio-p50-ms")
	b.ReportMetric(percentile(response, 0.99), "endpoint-to-audio-p99-ms")
	b.ReportMetric(float64(len(overhead)), "turns")
	if n := len(overhead); n >= 100 && len(allocs) == n {
		b.ReportMetric(mean(overhead[:50]), "overhead-mean-turns-1-50-ms")
		b.ReportMetric(mean(overhead[n-50:]), "overhead-mean-last-50-ms")
		b.ReportMetric(meanU(allocs[:50]), "allocs/turn-1-50")
		b.ReportMetric(meanU(allocs[n-50:]), "allocs/turn-last-50")
		b.ReportMetric(meanU(bytes[:50]), "B/turn-1-50")
		b.ReportMetric(meanU(bytes[n-50:]), "B/turn-last-50")
	}
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func meanU(v []uint64) float64 {
	var s uint64
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

// BenchmarkInterruption has the caller talk over a long agent reply b.N
// times and reports the time from the caller frame that crossed the
// interruption threshold to the agent's audio being stopped.
func BenchmarkInterruption(b *testing.B) {
	if espeakMissing() {
		b.Skip("espeak-ng is missing")
	}
	speech := benchSpeech(b)
	var mu sync.Mutex
	var stops []float64
	interrupted := make(chan struct{}, 1)
	replied := make(chan struct{}, 1)
	e := &Engine{LLM: delayedLLM{"Let me tell you about every dish on our long menu tonight."}, STT: delayedSTT{},
		TTS: toneTTS{perChar: 100 * time.Millisecond}}
	e.onInterrupt = func(d time.Duration) {
		mu.Lock()
		stops = append(stops, float64(d.Microseconds())/1000)
		mu.Unlock()
		interrupted <- struct{}{}
	}
	e.onTurn = func(map[string]float64) {
		select {
		case replied <- struct{}{}:
		default:
		}
	}
	sess, stop := benchCall(b, e, 2*time.Millisecond, func(a *model.Agent) { a.Config.FirstMessage = nil })
	defer stop()
	sess.say(speech) // the first turn: the agent starts its long reply
	b.ResetTimer()
	for range b.N {
		<-replied
		time.Sleep(20 * time.Millisecond) // it is talking
		sess.say(speech)
		select {
		case <-interrupted:
		case <-time.After(10 * time.Second):
			b.Fatal("no interruption")
		}
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	b.ReportMetric(percentile(stops, 0.5), "stop-p50-ms")
	b.ReportMetric(percentile(stops, 0.99), "stop-p99-ms")
	b.ReportMetric(float64(len(stops)), "interruptions")
}

func espeakMissing() bool { return requireSpeechErr() != nil }

func benchSpeech(b *testing.B) []int16 {
	var pcm []int16
	_, err := newEspeak().Synthesize(context.Background(), ttsRequest("I would like a table for two tonight."), Rate, func(p []int16) error {
		pcm = append(pcm, p...)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return pcm
}
