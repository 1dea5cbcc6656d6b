// Package media is the boundary between the phone network and the rest of
// Parley. It names what an answered call leg offers the conversation engine
// and the call plane, whatever carries it: audio frames in and out as 16-bit
// PCM at the rate the consumer asks for, keypad digits both ways, hang-up and
// the end of the call. It knows nothing of agents or calls; media/sipua
// implements it over SIP and RTP, media/audio holds the signal processing.
package media

import (
	"context"
	"errors"
	"time"
)

// FrameDuration is the length of one audio frame, in and out (RTP ptime).
const FrameDuration = 20 * time.Millisecond

// FrameSamples is the number of samples in one frame at rate Hz.
func FrameSamples(rate int) int { return rate * int(FrameDuration/time.Millisecond) / 1000 }

// ErrEnded is returned by a Session's methods once the leg is over.
var ErrEnded = errors.New("media: the call leg has ended")

// Session is one answered call leg.
type Session interface {
	// Audio gives the leg's audio at rate Hz (8000, 16000, 24000 or 48000);
	// resampling happens here and nowhere else.
	Audio(rate int) Audio
	// SendDigits plays keypad digits (0-9, *, #, A-D) to the far end as
	// RFC 4733 telephone-events, in order, after any audio already queued.
	SendDigits(ctx context.Context, digits string) error
	// Digits delivers keypad digits the far end pressed (RFC 4733 or SIP
	// INFO), in order. It is never closed; select on Done as well.
	Digits() <-chan rune
	// Hangup ends the leg from our side (BYE). Safe to call more than once.
	Hangup(ctx context.Context) error
	// Done is closed when the leg is over, whoever ended it.
	Done() <-chan struct{}
	// End says who ended the leg and why; valid once Done is closed.
	End() End
}

// Recorder receives every 20 ms tick of a leg: what the far end said and
// what we sent, both one frame at the leg's Rate, in step. It must not keep
// or change the slices. It runs on the clock that paces the leg's media
// (and other legs'): it must return at once, never waiting for a disk
// (recording.Writer copies the frames and writes them elsewhere).
type Recorder func(farEnd, ours []int16)

// Leg is an answered leg the call plane runs a call on: a Session at its
// own rate that can be recorded. A SIP leg (media/sipua) and a browser's
// WebRTC peer (media/webrtc) are legs.
type Leg interface {
	Session
	// Rate is the sample rate of the leg's own PCM, its codec's (8000
	// for G.711, 16000 for G.722): recordings are made at it.
	Rate() int
	// SetRecorder attaches (or, with nil, detaches) a recorder.
	SetRecorder(r Recorder)
}

// Audio is a leg's audio at one sample rate.
type Audio interface {
	// Read blocks for the next 20 ms frame of what the far end says
	// (silence frames while it says nothing, so reads keep real time).
	// It returns ErrEnded when the leg is over, or ctx's error.
	Read(ctx context.Context) ([]int16, error)
	// Write queues pcm (any length) to be played after what is already
	// queued, and returns at once. While nothing is queued the far end
	// hears comfort silence.
	Write(pcm []int16) error
	// Flush drops everything queued but not yet played (barge-in) and
	// returns how much was dropped.
	Flush() time.Duration
	// Drain blocks until everything queued has been played.
	Drain(ctx context.Context) error
}

// End is how a leg ended.
type End struct {
	// Remote is true when the far end hung up (BYE from them).
	Remote bool
	// Reason is a short description for logs and errorMessage ("BYE
	// received", "media timeout", ...).
	Reason string
	At     time.Time
}

// Arrivals is implemented by an Audio whose frames come off a network. The
// engine times a turn from when the caller's last voiced packet arrived,
// not from when its Read returned, so the time a frame waits inside Parley
// (a jitter buffer, a clock tick, a backlog) counts as Parley's share of the
// turn, as a caller measuring on the wire would count it.
type Arrivals interface {
	// Arrived is when the newest packet whose audio is in the frame Read
	// last returned came off the socket; zero for a frame filled in with
	// silence because nothing arrived. Call it from the goroutine that
	// calls Read, after Read returns.
	Arrived() time.Time
}
