package sipua

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/media"
)

// maxBurst is how many due frames of ours a leg sends at once when its
// pacer wakes late; older due frames are skipped. A receiver's jitter
// buffer takes a few frames early in its stride; a longer burst would
// arrive too late to play anyway.
const maxBurst = 3

// mediaClock is the time a leg's media runs on: the wall clock, or a
// test's clock that jumps or wakes late.
type mediaClock interface {
	Now() time.Time
	Sleep(d time.Duration)
}

type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }

// silence holds a frame of ours when nothing was sent, at any leg's rate
// (silence[:l.frame]); read only.
var silence = make([]int16, media.FrameSamples(maxRate))

// pacers are a UA's media clocks: one goroutine per core, each pacing a
// share of the legs. A goroutine and timer per leg cost more in scheduling
// than the frames themselves at a thousand legs; one walk over a shard's
// legs every 20 ms sends all their due frames together.
type pacers struct {
	shards []*pacer
	next   atomic.Uint64
}

func newPacers(clk mediaClock) *pacers {
	p := &pacers{shards: make([]*pacer, runtime.GOMAXPROCS(0))}
	for i := range p.shards {
		p.shards[i] = newPacer(clk)
	}
	return p
}

// join hands a leg to the next shard, round robin.
func (p *pacers) join(l *Leg) {
	p.shards[p.next.Add(1)%uint64(len(p.shards))].join(l)
}

// pacer is one shard's clock, anchored to the wall on a grid of frames:
// every leg's frame n is due at its t0 + n·20 ms, t0 on the grid, so one
// wake serves every leg. Its goroutine runs while it has legs.
type pacer struct {
	clk  mediaClock
	grid time.Time // frame boundaries are grid + k·20 ms

	mu      sync.Mutex
	legs    []*Leg
	running bool

	walk []*Leg // the goroutine's copy of legs
}

func newPacer(clk mediaClock) *pacer { return &pacer{clk: clk, grid: clk.Now()} }

// join starts pacing l from the current frame boundary: its frame 0 is
// due now.
func (p *pacer) join(l *Leg) {
	if p.add(l) {
		go p.run()
	}
}

// add puts l among the legs and reports whether run must be started.
func (p *pacer) add(l *Leg) bool {
	now := p.clk.Now()
	l.t0 = p.grid.Add(now.Sub(p.grid).Truncate(media.FrameDuration))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.legs = append(p.legs, l)
	start := !p.running
	p.running = true
	return start
}

// run walks the legs every frame until none is left.
func (p *pacer) run() {
	for {
		p.mu.Lock()
		if len(p.legs) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.walk = append(p.walk[:0], p.legs...)
		p.mu.Unlock()
		now := p.clk.Now()
		for _, l := range p.walk {
			if l.pace(now) {
				p.leave(l)
			}
		}
		clear(p.walk) // hold no ended leg
		now = p.clk.Now()
		next := p.grid.Add(now.Sub(p.grid).Truncate(media.FrameDuration) + media.FrameDuration)
		p.clk.Sleep(next.Sub(now))
	}
}

func (p *pacer) leave(l *Leg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, m := range p.legs {
		if m == l {
			p.legs = append(p.legs[:i], p.legs[i+1:]...)
			break
		}
	}
	l.loops.Done() // the leg's start counted the pacer in
}

// pace does every frame of the leg due by now and reports whether the leg
// is over. Each due frame takes one frame of caller audio for the
// recording (silence if none came), records it with what we sent, and
// fills in silence for the Audio reader when the caller's packets stopped.
// When the pacer wakes late the leg catches up: every due frame is
// recorded, the newest maxBurst frames of ours are sent and older ones
// skipped (their RTP timestamps pass unsent, and our queued audio waits
// rather than being cut). Once the leg is over the recording is padded up
// to its end, so it lasts as long as the leg, however late the pacer ran.
func (l *Leg) pace(now time.Time) bool {
	if l.stopping() {
		// Every frame begun before the end, as a frame is recorded when it
		// begins (pace's due): the one under way at the end too.
		last := int64((l.End().At.Sub(l.t0) + media.FrameDuration - 1) / media.FrameDuration)
		for ; l.n < last; l.n++ {
			l.record(silence[:l.frame])
		}
		return true
	}
	due := int64(now.Sub(l.t0)/media.FrameDuration) + 1
	for ; l.n < due; l.n++ {
		if err := l.tick(due-l.n <= maxBurst); err != nil {
			l.finish(media.End{Remote: true, Reason: "media closed"})
			return false // padded on the next walk
		}
	}
	if l.report != nil && l.n >= l.nextReport {
		l.report(now)
		l.nextReport = l.n + reportEvery
	}
	l.keepReaderInTime(due)
	l.trimBacklog()
	if l.timedOut(now) {
		l.finish(media.End{Reason: "media timeout: no RTP from the far end"})
		// BYE waits for an answer: not on the pacer. The leg's end waits
		// for it (the pacer's own count keeps loops above zero here).
		l.loops.Add(1)
		go func() {
			defer l.loops.Done()
			_ = l.hangup(context.Background())
		}()
	}
	return false
}

func (l *Leg) stopping() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// tick is one frame: send (or skip) ours, record both sides.
func (l *Leg) tick(send bool) error {
	ours := silence[:l.frame]
	switch {
	case !send:
		l.tx.skip()
	case l.tx.sending():
		if err := l.tx.event(); err != nil {
			return err
		}
	default:
		d, isDigit := l.takeOurs(l.ours)
		if isDigit {
			if err := l.tx.digit(d); err != nil {
				return err
			}
			break
		}
		if err := l.tx.audio(l.ours); err != nil {
			return err
		}
		ours = l.ours
	}
	l.record(ours)
	return nil
}
