package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/model"
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

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var overhead float64
	for _, fam := range families {
		if fam.GetName() != "parley_turn_latency_seconds" {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == "overhead" {
					overhead = m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	if overhead < lag.Seconds() {
		t.Errorf("parley_turn_latency_seconds{stage=overhead} sums %v s, want the turn's %v ms", overhead, f["overhead_ms"])
	}
}
