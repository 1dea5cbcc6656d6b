package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media"
)

// fakeSession is an in-memory call leg at rate (Rate unless the test says)
// with a real-time clock: each 20 ms it delivers one frame of what the test queued as the caller's
// speech (silence otherwise) and plays one frame of the agent's queue.
type fakeSession struct {
	mu      sync.Mutex
	caller  []int16 // queued caller audio
	out     []int16 // agent audio waiting to play
	played  []int16 // agent audio played, in order
	heardAt []time.Duration
	frames  chan frame // each stamped with when the clock made it
	done    chan struct{}
	once    sync.Once
	drained chan struct{}
	start   time.Time
	pressed []string
	tick    time.Duration
	rate    int
	asked   []int // the rates Audio was asked for
	// firstOut is when the agent's first audio played.
	firstOut time.Time
	made     int // frames the clock has made
}

func newFakeSession() *fakeSession { return newFakeSessionTick(media.FrameDuration) }

// newFakeSessionTick runs the session's clock at one frame per tick (a
// tick under 20 ms plays the call faster than real time, for benchmarks).
func newFakeSessionTick(tick time.Duration) *fakeSession { return newFakeSessionAt(Rate, tick) }

// newFakeSessionAt is a session whose audio is at rate, as a phone line's
// is at its codec's rate.
func newFakeSessionAt(rate int, tick time.Duration) *fakeSession {
	s := &fakeSession{frames: make(chan frame, 500), done: make(chan struct{}), drained: closed(), start: time.Now(), tick: tick, rate: rate}
	go s.clock()
	return s
}

func closed() chan struct{} { c := make(chan struct{}); close(c); return c }

func (s *fakeSession) clock() {
	t := time.NewTicker(s.tick)
	defer t.Stop()
	n := media.FrameSamples(s.rate)
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.made++
		f := make([]int16, n)
		c := copy(f, s.caller)
		s.caller = s.caller[c:]
		k := min(n, len(s.out))
		if k > 0 && s.firstOut.IsZero() {
			s.firstOut = time.Now()
		}
		s.played = append(s.played, s.out[:k]...)
		s.out = s.out[k:]
		if len(s.out) == 0 {
			select {
			case <-s.drained:
			default:
				close(s.drained)
			}
		}
		s.mu.Unlock()
		select {
		case s.frames <- frame{f, time.Now()}:
		default:
		}
	}
}

// say queues caller audio.
func (s *fakeSession) say(pcm []int16) {
	s.mu.Lock()
	s.caller = append(s.caller, pcm...)
	s.mu.Unlock()
}

func (s *fakeSession) playedAudio() []int16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int16(nil), s.played...)
}

func (s *fakeSession) hangup() { s.once.Do(func() { close(s.done) }) }

// Audio is the session's audio; it resamples nothing, so a test that reads
// it at another rate than the session's sees the mistake in asked.
func (s *fakeSession) Audio(rate int) media.Audio {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, rate)
	return s
}

func (s *fakeSession) askedRates() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.asked...)
}
func (s *fakeSession) SendDigits(ctx context.Context, digits string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pressed = append(s.pressed, digits)
	return nil
}
func (s *fakeSession) Digits() <-chan rune              { return nil }
func (s *fakeSession) Hangup(ctx context.Context) error { s.hangup(); return nil }
func (s *fakeSession) Done() <-chan struct{}            { return s.done }
func (s *fakeSession) End() media.End                   { return media.End{} }

func (s *fakeSession) Read(ctx context.Context) ([]int16, error) {
	f, err := s.readFrame(ctx)
	return f.pcm, err
}

func (s *fakeSession) readFrame(ctx context.Context) (frame, error) {
	select {
	case f := <-s.frames:
		return f, nil
	case <-s.done:
		return frame{}, media.ErrEnded
	case <-ctx.Done():
		return frame{}, ctx.Err()
	}
}

// backlogSession is a fakeSession whose frames wait inside it for lag
// after they arrive before Read returns them (a jitter buffer, a queue),
// and which says when each arrived, as media.Arrivals.
type backlogSession struct {
	*fakeSession
	lag time.Duration
}

func (s backlogSession) Audio(rate int) media.Audio {
	s.fakeSession.Audio(rate)
	return &backlogAudio{fakeSession: s.fakeSession, lag: s.lag}
}

type backlogAudio struct {
	*fakeSession
	lag  time.Duration
	last time.Time // the last frame's arrival
}

func (a *backlogAudio) Read(ctx context.Context) ([]int16, error) {
	f, err := a.readFrame(ctx)
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Until(f.at.Add(a.lag)))
	a.last = f.at
	return f.pcm, nil
}

func (a *backlogAudio) Arrived() time.Time { return a.last }

var _ media.Arrivals = (*backlogAudio)(nil)

func (s *fakeSession) Write(pcm []int16) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.out) == 0 {
		s.drained = make(chan struct{})
	}
	s.out = append(s.out, pcm...)
	return nil
}

func (s *fakeSession) Flush() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := time.Duration(len(s.out)) * time.Second / time.Duration(s.rate)
	s.out = nil
	select {
	case <-s.drained:
	default:
		close(s.drained)
	}
	return d
}

func (s *fakeSession) Drain(ctx context.Context) error {
	s.mu.Lock()
	ch := s.drained
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-s.done:
		return media.ErrEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// framesMade is how many frames the session's clock has made.
func (s *fakeSession) framesMade() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.made
}

// waitFrames waits until the session's clock has made n frames since the
// call began: line time, however slowly a loaded machine runs it.
func (s *fakeSession) waitFrames(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Duration(n)*s.tick + time.Minute)
	for {
		s.mu.Lock()
		made := s.made
		s.mu.Unlock()
		if made >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session made %d frames of %d", made, n)
		}
		time.Sleep(s.tick)
	}
}

// queuedOut is the agent audio waiting to play.
func (s *fakeSession) queuedOut() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.out)
}

// busy: caller audio is queued or agent audio is playing.
func (s *fakeSession) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.caller) > 0 || len(s.out) > 0
}
