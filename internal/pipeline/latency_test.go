package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/telephony"
)

// TestTurnLatencyCountsTheWaitForTheRead: on a leg that says when each
// packet arrived (media.Arrivals), a turn is timed from the arrival of the
// caller's last speech, so audio held inside Parley before the engine read
// it (here 60 ms in the leg) is Parley's share of the turn: in overhead_ms
// and first_audio_ms of the call's metrics and in the Prometheus histogram,
// not hidden in the endpointing window or the recognizer's time.
func TestTurnLatencyCountsTheWaitForTheRead(t *testing.T) {
	requireSpeech(t)
	const lag = 60 * time.Millisecond
	b := newBench(t, func(a *model.Agent) { a.Config.FirstMessage = nil })
	reg := prometheus.NewRegistry()
	turns := make(chan map[string]float64, 1)
	e := &Engine{LLM: delayedLLM{"Certainly."}, STT: delayedSTT{}, TTS: toneTTS{perChar: time.Millisecond},
		Store: b.st, Metrics: NewMetrics(reg)}
	e.onTurn = func(f map[string]float64) {
		select {
		case turns <- f:
		default:
		}
	}
	sess := newFakeSession()
	live := telephony.NewLive(b.call, b.agent, backlogSession{sess, lag}, func(string) { sess.hangup() })
	done := make(chan struct{})
	go func() { e.Run(context.Background(), live); close(done) }()
	defer func() { sess.hangup(); <-done }()

	sess.say(callerSays(t, "A table for two."))
	var f map[string]float64
	select {
	case f = <-turns:
	case <-done:
		t.Fatal("the call ended without a turn")
	}
	ms := float64(lag / time.Millisecond)
	if f["overhead_ms"] < ms || f["first_audio_ms"] < f["endpointing_ms"]+ms {
		t.Errorf("the %v the audio waited in the leg is not Parley's share: %v", lag, f)
	}

	if overhead := histogramSum(t, reg, "overhead"); overhead < lag.Seconds() {
		t.Errorf("parley_turn_latency_seconds{stage=overhead} sums %v s, want the turn's %v ms", overhead, f["overhead_ms"])
	}
}

// TestTurnLatencyNamesThePolicysWait: each turn's metrics say the silence
// the turn-taking rules called for (endpointing_wait_ms), as the words
// known when the turn ended chose it: minSilenceMs after a complete
// sentence and for a recognizer without partial text, a quarter of the way
// to maxSilenceMs when the words do not tell, maxSilenceMs (the VAD's own
// hangover) after an unfinished one; and when the words come late, the
// wait they called for then. The same figure is a stage of the Prometheus
// histogram.
func TestTurnLatencyNamesThePolicysWait(t *testing.T) {
	requireSpeech(t)
	speech := trimmed(callerSays(t, "I would like a table for two"))
	maxSilence := func(ms float64) map[string]any {
		return map[string]any{"endpointing": map[string]any{"maxSilenceMs": ms}}
	}
	for _, tc := range []struct {
		name string
		rc   map[string]any
		stt  stt.Recognizer
		want time.Duration
	}{
		{"complete", nil, newWordsSTT(saying("I would like a table for two.", "I would like a table for two.")), 300 * time.Millisecond},
		{"undecided", nil, newWordsSTT(saying("i would like a table for two", "i would like a table for two")), 525 * time.Millisecond},
		{"unfinished", nil, newWordsSTT(saying("i would like a table for two and", "i would like a table for two and")), 1200 * time.Millisecond},
		{"unfinished, maxSilenceMs 800", maxSilence(800), newWordsSTT(saying("a table for two and", "a table for two and")), 800 * time.Millisecond},
		{"undecided, maxSilenceMs 700", maxSilence(700), newWordsSTT(saying("a table for two", "a table for two")), 400 * time.Millisecond},
		{"no partial text", nil, &scriptedSTT{texts: []string{"a table for two and"}}, 300 * time.Millisecond},
		// Undecided (975 ms) until the words come, well before that.
		{"complete words 400 ms into the silence", maxSilence(3000), newWordsSTT(wordsScript{
			partials: []partialAt{{0, ""}, {len(speech) + framesOf(400*time.Millisecond)*frameSamples, "A table for two."}},
			final:    "A table for two.",
		}), 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, noGreeting(tc.rc))
			reg := prometheus.NewRegistry()
			turns := make(chan map[string]float64, 1)
			e := &Engine{LLM: fakeLLM(t, answers("Certainly.")), STT: tc.stt, TTS: instantTTS{}, Store: b.st, Metrics: NewMetrics(reg)}
			e.onTurn = func(f map[string]float64) {
				select {
				case turns <- f:
				default:
				}
			}
			r := start(t, b, e)
			r.sess.say(append(slices.Clone(speech), audio.Silence(Rate, 3*time.Second)...))
			var f map[string]float64
			select {
			case f = <-turns:
			case <-r.done:
				t.Fatal("the call ended without a turn")
			}
			want := float64(tc.want.Milliseconds())
			if got, ok := f["endpointing_wait_ms"]; !ok || got != want {
				t.Errorf("endpointing_wait_ms = %v (present: %v), want %v; the turn: %v", got, ok, want, f)
			}
			if got := histogramSum(t, reg, "endpointing_wait"); got != want/1000 {
				t.Errorf("parley_turn_latency_seconds{stage=endpointing_wait} sums %v s, want %v", got, want/1000)
			}
		})
	}
}

// histogramSum is the sum of parley_turn_latency_seconds{stage} in reg.
func histogramSum(t *testing.T, reg *prometheus.Registry, stage string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != "parley_turn_latency_seconds" {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == stage {
					return m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0
}

// A wait between two frame ends takes the nearer frame: the grid adds no
// systematic delay to the policy's wait (525 ms ended at 540 before).
func TestWaitOnTheFrameGrid(t *testing.T) {
	c := &conversation{rate: 8000}
	f := frame{pcm: make([]int16, 160)}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		silence, wait int
		want          bool
	}{
		{280, 300, false}, {300, 300, true},
		{500, 525, false}, {520, 525, true},
		{520, 530, false}, {540, 530, true},
		{1180, 1200, false}, {1200, 1200, true},
	} {
		if got := c.waited(ms(tc.silence), f, ms(tc.wait)); got != tc.want {
			t.Errorf("%d ms of silence against a %d ms wait: ended %v, want %v", tc.silence, tc.wait, got, tc.want)
		}
	}
}
