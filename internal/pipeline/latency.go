package pipeline

import (
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stage is a moment in a turn, from the end of the caller's speech to the
// agent's first audio on the line.
//
// The caller's moments are when their packets arrived (media.Arrivals),
// not when the engine got to read them: whatever the audio waited inside
// Parley (a jitter buffer, a clock tick, a backlog, a busy loop) counts in
// overhead_ms, as a caller timing the turn on the wire would count it.
// The agent's first audio is timed when it is handed to the line; the
// wire adds at most one 20 ms send tick to that.
type stage int

const (
	stageSpeechEnd     stage = iota // the caller's last speech frame arrived
	stageEndpointed                 // the frame that ended the turn arrived (after the silence its words called for: turntaking)
	stageSTTAsked                   // the engine told the recognizer the utterance is over
	stageSTT                        // the final transcript is in
	stageLLMStart                   // the model was asked
	stageLLMFirstToken              // its first token came
	stageTTSStart                   // the first sentence went to speech synthesis
	stageTTSFirstAudio              // its first audio came back
	stageFirstAudio                 // that audio was handed to the line (RTP on the next 20 ms tick)
	nStages
)

// latency times one turn. Its moments are set by the loop, the reply and
// the speech goroutines; the turn is reported once, at its first audio.
type latency struct {
	mu     sync.Mutex
	turnID string
	at     [nStages]time.Time
	// wait is the silence the turn-taking rules called for, given the
	// words known on the frame that ended the turn (turntaking): what the
	// policy chose, where the endpointing stage is what it took.
	wait     time.Duration
	reported bool
}

func newLatency(speechEnd, endpointed time.Time, wait time.Duration) *latency {
	l := &latency{wait: wait}
	l.at[stageSpeechEnd], l.at[stageEndpointed] = speechEnd, endpointed
	l.at[stageSTTAsked] = time.Now()
	return l
}

// mark records the moment s happened, the first time only. Nil-safe:
// turns that answer no caller speech are not timed.
func (l *latency) mark(s stage) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.at[s].IsZero() {
		l.at[s] = time.Now()
	}
	l.mu.Unlock()
}

// figures is the turn's breakdown in milliseconds, the keys of a
// metrics.turn_latency entry; false until the turn has its first audio.
// overhead_ms is Parley's own share: the response time less the endpointing
// window (as the wire saw it) and the providers' time (recognition from
// the moment it was told the utterance ended, the model's first sentence,
// the first synthesized audio). endpointing_wait_ms is the silence the
// policy chose for the turn (minSilenceMs, the quarter, maxSilenceMs):
// endpointing_ms is that wait on the 20 ms frame grid, plus however late
// the partial text that decided it came.
func (l *latency) figures() (map[string]float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reported || l.at[stageFirstAudio].IsZero() || l.at[stageSpeechEnd].IsZero() {
		return nil, false
	}
	l.reported = true
	ms := func(from, to stage) float64 {
		if l.at[from].IsZero() || l.at[to].IsZero() {
			return 0
		}
		return math.Round(float64(l.at[to].Sub(l.at[from]).Microseconds())/100) / 10
	}
	f := map[string]float64{
		"endpointing_ms":      ms(stageSpeechEnd, stageEndpointed),
		"endpointing_wait_ms": float64(l.wait.Microseconds()) / 1000,
		"stt_ms":              ms(stageSTTAsked, stageSTT),
		"llm_first_token_ms":  ms(stageLLMStart, stageLLMFirstToken),
		"tts_first_audio_ms":  ms(stageTTSStart, stageTTSFirstAudio),
		"first_audio_ms":      ms(stageSpeechEnd, stageFirstAudio),
	}
	providers := ms(stageSpeechEnd, stageEndpointed) + ms(stageSTTAsked, stageSTT) + ms(stageLLMStart, stageTTSStart) + ms(stageTTSStart, stageTTSFirstAudio)
	f["overhead_ms"] = math.Round((f["first_audio_ms"]-providers)*10) / 10
	return f, true
}

// Metrics are the engine's Prometheus metrics.
type Metrics struct {
	turn      *prometheus.HistogramVec
	interrupt prometheus.Histogram
	decision  prometheus.Histogram
}

// NewMetrics registers parley_turn_latency_seconds{stage},
// parley_interruption_stop_seconds and parley_flow_decision_seconds with
// reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		turn: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parley_turn_latency_seconds",
			Help:    "Per-turn latency by stage: endpointing (the silence waited), endpointing_wait (the silence the turn-taking rules called for), stt, llm_first_token, tts_first_audio, first_audio (arrival of the caller's last speech packet to the agent's first audio handed to the line) and overhead (Parley's own share, every wait inside Parley included).",
			Buckets: []float64{.005, .01, .025, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10},
		}, []string{"stage"}),
		interrupt: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parley_interruption_stop_seconds",
			Help:    "From the caller frame that crossed the interruption threshold to the agent's audio stopped.",
			Buckets: []float64{.0001, .0005, .001, .005, .01, .02, .05, .1},
		}),
	}
	m.decision = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "parley_flow_decision_seconds",
		Help:    "Conversation flows: from the start of the agent's turn to the first words or action of the node that answers (edges decided, extractions and tools included).",
		Buckets: []float64{.001, .01, .05, .1, .2, .3, .5, .75, 1, 1.5, 2, 3, 5, 10},
	})
	if reg != nil {
		reg.MustRegister(m.turn, m.interrupt, m.decision)
	}
	return m
}

func (m *Metrics) observeDecision(d time.Duration) {
	if m != nil {
		m.decision.Observe(d.Seconds())
	}
}

func (m *Metrics) observeTurn(f map[string]float64) {
	if m == nil {
		return
	}
	for k, v := range f {
		m.turn.WithLabelValues(k[:len(k)-3]).Observe(v / 1000)
	}
}

func (m *Metrics) observeInterrupt(d time.Duration) {
	if m != nil {
		m.interrupt.Observe(d.Seconds())
	}
}

// reportTurn records a turn's latency breakdown, once, when its first
// audio reached the line: in the call's metrics, the log and Prometheus.
func (c *conversation) reportTurn(l *latency) {
	f, ok := l.figures()
	if !ok {
		return
	}
	c.metrics.addTurn(l.turnID, f)
	if c.e.onTurn != nil {
		c.e.onTurn(f)
	}
	c.e.log().Info("turn", "call_id", c.live.Call.ID, "turn_id", l.turnID, "first_audio_ms", f["first_audio_ms"],
		"endpointing_ms", f["endpointing_ms"], "endpointing_wait_ms", f["endpointing_wait_ms"], "stt_ms", f["stt_ms"], "llm_first_token_ms", f["llm_first_token_ms"],
		"tts_first_audio_ms", f["tts_first_audio_ms"], "overhead_ms", f["overhead_ms"])
}
