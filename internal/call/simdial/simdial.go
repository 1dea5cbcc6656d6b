// Package simdial holds the dialers `parley serve` uses without telephony:
// None, which fails every call with a message naming the setting, and
// Simulated, which places no call at all but lets a deployment exercise the
// API, the queue and its webhooks: each call rings, is answered, and stays
// up until it is canceled or its duration runs out.
package simdial

import (
	"context"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
)

// None fails every call: no dialer is configured.
type None struct{}

// Dial implements call.Dialer.
func (None) Dial(context.Context, call.DialRequest, func([]byte)) (call.Line, error) {
	return nil, &call.DialError{Cause: call.CauseDialFailed,
		Message: "no telephony is configured: start parley serve with --dialer (PARLEY_DIALER)"}
}

// Simulated answers every call after Ring and hangs it up as the far end
// after Duration (0: never; the call lasts until canceled).
type Simulated struct {
	Ring     time.Duration
	Duration time.Duration
}

// Dial implements call.Dialer.
func (s Simulated) Dial(ctx context.Context, req call.DialRequest, ringing func([]byte)) (call.Line, error) {
	ringing(nil) // no far end to cancel
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(s.Ring):
	}
	l := &line{ended: make(chan struct{})}
	if s.Duration > 0 {
		l.timer = time.AfterFunc(s.Duration, func() {
			l.end(call.Result{Status: model.CallCompleted, HangupCause: call.CauseUserEnded})
		})
	}
	return l, nil
}

type line struct {
	once   sync.Once
	ended  chan struct{}
	result call.Result
	timer  *time.Timer
}

func (l *line) Ended() <-chan struct{} { return l.ended }
func (l *line) Result() call.Result    { <-l.ended; return l.result }
func (l *line) RecordingURL() string   { return "" } // simulated calls carry no audio
func (l *line) Hangup(cause string) {
	l.end(call.Result{Status: model.CallCompleted, HangupCause: cause})
}

func (l *line) end(r call.Result) {
	l.once.Do(func() {
		if l.timer != nil {
			l.timer.Stop()
		}
		l.result = r
		close(l.ended)
	})
}
