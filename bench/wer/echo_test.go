package wer

import (
	"context"
	"math"
	"sync"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// echo is a recognizer for the harness's own tests that cannot cheat: it
// knows a few clips by the shape of their loudness (the RMS of each 20 ms
// frame) and, given audio, says the scripted text of the clip whose shape
// correlates best with it at any alignment, or nothing when none reaches
// 0.9. So an utterance scores as scripted only if the line delivered that
// utterance's audio, whole, to the recognition of that utterance. It
// streams too: Write collects, Close decides.
type echo struct {
	rate  int
	known []knownClip
}

type knownClip struct {
	env []float64
	say string
}

func newEcho(rate int, clips []Clip, say []string) *echo {
	e := &echo{rate: rate}
	for i, c := range clips {
		e.known = append(e.known, knownClip{envelope(toRate(c, rate), rate), say[i]})
	}
	return e
}

func (e *echo) Transcribe(ctx context.Context, pcm []int16, rate int, _ string) (stt.Result, error) {
	if err := ctx.Err(); err != nil {
		return stt.Result{}, err
	}
	return stt.Result{Text: e.hear(pcm, rate), Audio: stt.Duration(len(pcm), rate)}, nil
}

func (e *echo) Open(ctx context.Context, rate int, _ string) (stt.Stream, error) {
	return &echoStream{e: e, ctx: ctx, rate: rate}, nil
}

func (e *echo) hear(pcm []int16, rate int) string {
	if rate != e.rate {
		return ""
	}
	env := envelope(pcm, rate)
	best, say := 0.9, ""
	for _, k := range e.known {
		if c := bestCorrelation(env, k.env); c >= best {
			best, say = c, k.say
		}
	}
	return say
}

type echoStream struct {
	e    *echo
	ctx  context.Context
	rate int
	mu   sync.Mutex
	pcm  []int16
}

func (s *echoStream) Write(pcm []int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pcm = append(s.pcm, pcm...)
	return s.ctx.Err()
}

func (s *echoStream) Close() (stt.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctx.Err(); err != nil {
		return stt.Result{}, err
	}
	return stt.Result{Text: s.e.hear(s.pcm, s.rate), Audio: stt.Duration(len(s.pcm), s.rate)}, nil
}

// adaptiveEcho is an echo that can be adapted: to the domain it was built
// for, it becomes better, an echo saying better instead.
type adaptiveEcho struct {
	*echo
	domain  string
	better  *echo
	adapted []string // domain keys asked for
}

func (a *adaptiveEcho) Adapt(_ context.Context, d stt.Domain) (stt.Recognizer, error) {
	a.adapted = append(a.adapted, d.Key)
	if d.Key != a.domain {
		return a.echo, nil
	}
	return a.better, nil
}

// envelope is the RMS of each whole 20 ms frame.
func envelope(pcm []int16, rate int) []float64 {
	n := media.FrameSamples(rate)
	var env []float64
	for i := 0; i+n <= len(pcm); i += n {
		env = append(env, audio.RMS(pcm[i:i+n]))
	}
	return env
}

// bestCorrelation is the highest Pearson correlation of a and b over
// every alignment that overlaps at least 80% of the shorter.
func bestCorrelation(a, b []float64) float64 {
	short := min(len(a), len(b))
	best := -1.0
	for lag := -len(b) + 1; lag < len(a); lag++ {
		var x, y []float64
		for i := range b {
			if j := i + lag; j >= 0 && j < len(a) {
				x, y = append(x, a[j]), append(y, b[i])
			}
		}
		if len(x)*5 < short*4 {
			continue
		}
		best = max(best, pearson(x, y))
	}
	return best
}

func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
