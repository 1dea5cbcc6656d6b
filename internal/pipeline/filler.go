package pipeline

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/pipeline/turntaking"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// A filler keeps a waiting caller company: when a tool or a retrieval has
// not answered after filler.afterMs, the agent says one short phrase
// ("One moment.", the agent's phrases in turn) or plays a soft sound, once
// per wait. It is never started over the caller, stops when the caller
// starts talking, and stops at once when the wait is over. It is not
// something the agent said: the model never sees it, and the transcript
// records it as an entry of type "filler".

// waiting runs work (a tool, a retrieval) on the reply's goroutine, with a
// filler past the agent's filler.afterMs.
func (r *reply) waiting(work func()) {
	f := r.c.turns.Filler
	if !f.Enabled || f.Sound != turntaking.SoundSoft && r.c.e.TTS == nil {
		work()
		return
	}
	fl := r.startFiller(f.After)
	defer fl.stop()
	work()
}

// filler is one wait's filler. The reply's goroutine owns it: it starts
// the timer and, in stop, stops it and waits for the timer's goroutine,
// which plays the filler.
type filler struct {
	r      *reply
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
	done   chan struct{} // closed when the timer's goroutine is over

	mu      sync.Mutex
	stopped bool // nothing more goes to the line
	heard   bool // some of it went to the line
}

func (r *reply) startFiller(after time.Duration) *filler {
	ctx, cancel := context.WithCancel(r.ctx)
	f := &filler{r: r, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.filler = f
	r.mu.Unlock()
	f.timer = time.AfterFunc(after, f.play)
	return f
}

// stop ends the wait's filler and returns once nothing of it can reach the
// line any more; the reply's goroutine only.
func (f *filler) stop() {
	f.r.mu.Lock()
	f.r.filler = nil
	f.r.mu.Unlock()
	if f.timer.Stop() { // it never started
		f.cancel()
		return
	}
	f.silence()
	f.cancel()
	<-f.done
}

// hush stops the filler playing, if any (the caller started talking).
// Any goroutine.
func (r *reply) hush() {
	r.mu.Lock()
	f := r.filler
	r.mu.Unlock()
	if f != nil {
		f.silence()
	}
}

// silence stops the filler and drops what of it is still queued on the
// line. Nothing else is queued there while a tool runs: what the agent
// said before it has played (rounds waits for it), and what it says next
// comes after stop. Any goroutine.
func (f *filler) silence() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	f.stopped = true
	if f.heard {
		f.r.c.audio.Flush()
	}
}

// play plays the filler, unless the caller is talking; the timer's
// goroutine.
func (f *filler) play() {
	defer close(f.done)
	c := f.r.c
	if c.talking.Load() || f.ctx.Err() != nil {
		return
	}
	n := c.fillers.Add(1) - 1
	set := c.turns.Filler
	if set.Sound == turntaking.SoundSoft {
		if f.write(thinkingSound(c.rate)) == nil {
			c.log.filler(f.r.turnID, "", set.Sound)
		}
		return
	}
	phrase := set.Phrases[int(n%int64(len(set.Phrases)))]
	logged := false
	st, err := c.e.TTS.Synthesize(f.ctx, speechRequest(c.agent, phrase), c.rate, func(pcm []int16) error {
		if err := f.write(pcm); err != nil {
			return err
		}
		if !logged {
			logged = true
			c.log.filler(f.r.turnID, phrase, "")
		}
		return nil
	})
	c.metrics.addTTS(st)
	if err != nil && f.ctx.Err() == nil {
		c.e.log().Warn("filler not spoken", "call_id", c.live.Call.ID, "err", err)
	}
}

// write puts filler audio on the line unless it was stopped: under the
// lock, so nothing follows silence's flush.
func (f *filler) write(pcm []int16) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped || f.ctx.Err() != nil {
		return context.Canceled
	}
	if err := f.r.c.audio.Write(pcm); err != nil {
		return err
	}
	f.heard = true
	return nil
}

// fillable: a wait on these tool calls may have a filler. Not one that
// acts on the line itself: keys pressed (the filler would sound over the
// tones), a transfer (it has its own hold message and music).
func fillable(calls []llm.ToolCall) bool {
	for _, tc := range calls {
		if tc.Name == toolPressDigit || tc.Name == toolTransfer {
			return false
		}
	}
	return true
}

// The soft "thinking" sound: a quiet two-note chime (A4 then E5, each
// with its octave a little below) every second, with a soft attack and a
// bell's decay, at about -30 dBFS: heard as "still there, working", not
// as speech or a ringing tone. It plays for at most softSoundLength and
// stops as soon as the wait is over.
const (
	softSoundLength = 8 * time.Second
	softSoundPeriod = time.Second
	softSoundLevel  = 0.03 // peak amplitude, of full scale
)

// thinkingSound generates the soft sound at rate.
func thinkingSound(rate int) []int16 {
	n := int(softSoundLength.Seconds() * float64(rate))
	period := int(softSoundPeriod.Seconds() * float64(rate))
	out := make([]int16, n)
	notes := []struct {
		freq  float64
		start float64 // seconds into the period
	}{{440, 0}, {659.25, 0.16}}
	const attack, decay = 0.012, 0.09 // seconds
	for i := range out {
		t := float64(i%period) / float64(rate)
		var v float64
		for _, nt := range notes {
			dt := t - nt.start
			if dt < 0 || dt > 0.6 {
				continue
			}
			env := math.Exp(-dt / decay)
			if dt < attack {
				env *= math.Sin(math.Pi / 2 * dt / attack)
			}
			w := 2 * math.Pi * nt.freq * dt
			v += env * (math.Sin(w) + 0.25*math.Sin(2*w))
		}
		out[i] = int16(math.Round(v / 1.25 * softSoundLevel * 32767))
	}
	return out
}
