package sipua

import (
	"context"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// legAudio is a Leg's audio at one rate: the one place PCM is resampled
// between the codec's rate and what the conversation engine wants.
type legAudio struct {
	l    *Leg
	rate int

	mu   sync.Mutex // resamplers keep state between frames
	up   *audio.Resampler
	down *audio.Resampler

	arrived time.Time // the reader's own (see media.Arrivals)
	frame   []int16   // the reader's own: a frame at the leg's rate, to resample
}

// Read returns the next frame of the caller's in a new slice, the
// caller's to keep (media.Audio): the one allocation per frame on the way
// in; the leg decodes into its own ring (callerQueue).
func (a *legAudio) Read(ctx context.Context) ([]int16, error) {
	l := a.l
	for {
		if f, ok := a.take(); ok {
			return f, nil
		}
		select {
		case <-l.in.ready:
		case <-l.done:
			return nil, media.ErrEnded
		case <-l.stop:
			return nil, media.ErrEnded
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// take takes the next frame waiting, at the reader's rate.
func (a *legAudio) take() ([]int16, bool) {
	l := a.l
	if a.rate == l.rate {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.in.n == 0 {
			return nil, false
		}
		f := make([]int16, l.frame)
		a.arrived, _ = l.in.pop(f)
		return f, true
	}
	a.mu.Lock() // the resampler and a.frame
	defer a.mu.Unlock()
	l.mu.Lock()
	at, ok := l.in.pop(a.frame)
	l.mu.Unlock()
	if !ok {
		return nil, false
	}
	a.arrived = at
	return a.up.Process(make([]int16, 0, media.FrameSamples(a.rate)), a.frame), true
}

func (a *legAudio) Write(pcm []int16) error {
	select {
	case <-a.l.stop:
		return media.ErrEnded
	default:
	}
	var s []int16
	if a.rate == a.l.rate {
		s = append([]int16(nil), pcm...)
	} else {
		a.mu.Lock()
		s = a.down.Process(nil, pcm)
		a.mu.Unlock()
	}
	if len(s) > 0 {
		a.l.enqueue(outItem{pcm: s})
	}
	return nil
}

func (a *legAudio) Flush() time.Duration {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	kept := l.out[:0]
	for _, it := range l.out {
		if it.pcm == nil {
			kept = append(kept, it) // digits are not speech: they stay
			continue
		}
		n += len(it.pcm)
	}
	l.out = kept
	l.outLive, l.livePlaying = 0, false
	l.signalDrained()
	return time.Duration(n) * time.Second / time.Duration(l.rate)
}

func (a *legAudio) Drain(ctx context.Context) error { return a.l.drain(ctx) }

// Arrived is when the packet carrying the newest audio of the frame Read
// last returned came off the socket: audio reaches the reader as soon as
// it is decoded, so the engine's turn timing starts on the wire.
func (a *legAudio) Arrived() time.Time { return a.arrived }

var _ media.Arrivals = (*legAudio)(nil)
