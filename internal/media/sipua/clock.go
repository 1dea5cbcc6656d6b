package sipua

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/media"
)

// maxBurst is how many due frames of ours the clock sends at once when it
// wakes late; older due frames are skipped. A receiver's jitter buffer
// takes a few frames early in its stride; a longer burst would arrive too
// late to play anyway.
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

// silence is a frame of ours when nothing was sent; read only.
var silence = make([]int16, frame)

// clock is the leg's one clock, anchored to the wall: frame n is due at
// t0 + n·20 ms. Each due frame takes one frame of caller audio (silence if
// none came), records it with what we sent, and hands it to the reader or
// the bridged peer. When the clock wakes late it catches up: every due
// caller frame is taken, the newest maxBurst frames of ours are sent and
// older ones skipped (their RTP timestamps pass unsent, and our queued
// audio waits rather than being cut). The recording gets every due frame,
// so it lasts as long as the leg, however late the clock ran.
func (l *Leg) clock() {
	defer l.loops.Done()
	var n int64 // frames done
run:
	for !l.stopping() {
		due := int64(l.clk.Now().Sub(l.t0)/media.FrameDuration) + 1
		for ; n < due; n++ {
			if err := l.tick(due-n <= maxBurst); err != nil {
				l.finish(media.End{Remote: true, Reason: "media closed"})
				break run
			}
		}
		l.trimBacklog()
		if l.timedOut() {
			l.finish(media.End{Reason: "media timeout: no RTP from the far end"})
			_ = l.hangup(context.Background())
			break
		}
		l.clk.Sleep(l.t0.Add(time.Duration(n) * media.FrameDuration).Sub(l.clk.Now()))
	}
	// Pad the recording up to the end: the frames due while the clock
	// slept or waited for the CPU.
	last := int64(l.End().At.Sub(l.t0) / media.FrameDuration)
	for ; n < last; n++ {
		l.record(l.takeCaller(), silence)
	}
}

func (l *Leg) stopping() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// tick is one frame: send (or skip) ours, record both sides, deliver the
// caller's.
func (l *Leg) tick(send bool) error {
	caller := l.takeCaller()
	ours := silence
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
	l.record(caller, ours)
	l.deliver(caller)
	return nil
}
