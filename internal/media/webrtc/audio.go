package webrtc

import (
	"context"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// peerAudio is a Peer's audio at one rate: the one place PCM is resampled
// between the codec's rate and what the conversation engine wants.
type peerAudio struct {
	p    *Peer
	rate int

	mu   sync.Mutex // resamplers keep state between frames
	up   *audio.Resampler
	down *audio.Resampler

	arrived time.Time // the reader's own (see media.Arrivals)
}

func (a *peerAudio) Read(ctx context.Context) ([]int16, error) {
	select {
	case <-a.p.stop: // over: what is left unread is dropped
		return nil, media.ErrEnded
	default:
	}
	select {
	case f := <-a.p.in:
		a.arrived = f.at
		if a.rate == a.p.rate {
			return f.pcm, nil
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.up.Process(make([]int16, 0, media.FrameSamples(a.rate)), f.pcm), nil
	case <-a.p.stop:
		return nil, media.ErrEnded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *peerAudio) Write(pcm []int16) error {
	select {
	case <-a.p.stop:
		return media.ErrEnded
	default:
	}
	var s []int16
	if a.rate == a.p.rate {
		s = append([]int16(nil), pcm...)
	} else {
		a.mu.Lock()
		s = a.down.Process(nil, pcm)
		a.mu.Unlock()
	}
	a.p.enqueue(s)
	return nil
}

func (a *peerAudio) Flush() time.Duration {
	p := a.p
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, s := range p.out {
		n += len(s)
	}
	p.out = nil
	p.signalDrained()
	return time.Duration(n) * time.Second / time.Duration(p.rate)
}

func (a *peerAudio) Drain(ctx context.Context) error { return a.p.drain(ctx) }

// Arrived is when the packet carrying the newest audio of the frame Read
// last returned arrived.
func (a *peerAudio) Arrived() time.Time { return a.arrived }

var _ media.Arrivals = (*peerAudio)(nil)
