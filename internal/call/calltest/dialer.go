// Package calltest provides a Dialer for tests that never touches the
// network: each dial is handed to the test, which rings, answers, fails or
// hangs up the call on cue, or the dialer follows a Script on its own.
package calltest

import (
	"context"
	"sync"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
)

// Script is what an automatic call does: ring, then fail with Fail, or be
// answered and, when HangupAfterAnswer, hang up at once as the far end.
// The zero Script rings forever (until canceled).
type Script struct {
	Fail              *call.DialError
	Answer            bool
	HangupAfterAnswer bool
}

// Dialer is a call.Dialer under a test's control.
type Dialer struct {
	// Script, when set, decides each call by itself; otherwise each call is
	// sent on Dialed for the test to drive.
	Script func(call.DialRequest) Script

	once   sync.Once
	dialed chan *Call
}

// Dialed delivers every call placed without a Script.
func (d *Dialer) Dialed() <-chan *Call {
	d.once.Do(func() { d.dialed = make(chan *Call, 1024) })
	return d.dialed
}

// Call is one dialed call.
type Call struct {
	Req     call.DialRequest
	ringing func([]byte)
	answer  chan struct{}
	fail    chan *call.DialError
	line    *Line
}

// Ring reports the far end ringing, with nothing to cancel it by.
func (c *Call) Ring() { c.ringing(nil) }

// RingWith reports the far end ringing, with the state that cancels it.
func (c *Call) RingWith(state []byte) { c.ringing(state) }

// Answer answers the call; the returned line is the far end's control.
func (c *Call) Answer() *Line {
	close(c.answer)
	return c.line
}

// Fail ends the unanswered call with err.
func (c *Call) Fail(err *call.DialError) { c.fail <- err }

// Dial implements call.Dialer.
func (d *Dialer) Dial(ctx context.Context, req call.DialRequest, ringing func([]byte)) (call.Line, error) {
	var once sync.Once
	c := &Call{
		Req: req, ringing: func(state []byte) { once.Do(func() { ringing(state) }) }, answer: make(chan struct{}), fail: make(chan *call.DialError, 1),
		line: &Line{ended: make(chan struct{}), hangups: make(chan string, 1)},
	}
	if d.Script != nil {
		s := d.Script(req)
		c.Ring()
		switch {
		case s.Fail != nil:
			return nil, s.Fail
		case s.Answer:
			if s.HangupAfterAnswer {
				c.line.RemoteHangup()
			}
			return c.line, nil
		}
	} else {
		d.Dialed()
		d.dialed <- c
	}
	select {
	case <-c.answer:
		return c.line, nil
	case err := <-c.fail:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Line is an answered fake call.
type Line struct {
	mu      sync.Mutex
	ended   chan struct{}
	result  call.Result
	outcome call.Outcome
	hangups chan string
}

// Reports sets what the line's conversation reports when the line ends,
// whoever ends it.
func (l *Line) Reports(out call.Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outcome = out
}

// Ended implements call.Line.
func (l *Line) Ended() <-chan struct{} { return l.ended }

// Result implements call.Line.
func (l *Line) Result() call.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.result
}

// Hangup implements call.Line: our side hangs up with cause.
func (l *Line) Hangup(cause string) {
	if l.end(call.Result{Status: model.CallCompleted, HangupCause: cause}) {
		l.hangups <- cause
	}
}

// RecordingURL implements call.Line: fake calls are not recorded.
func (l *Line) RecordingURL() string { return "" }

// HungUp delivers the cause when our side hangs up.
func (l *Line) HungUp() <-chan string { return l.hangups }

// RemoteHangup is the far end hanging up.
func (l *Line) RemoteHangup() {
	l.end(call.Result{Status: model.CallCompleted, HangupCause: call.CauseUserEnded})
}

// End ends the call with any result (a transfer, a failure mid-call).
func (l *Line) End(r call.Result) { l.end(r) }

func (l *Line) end(r call.Result) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.ended:
		return false
	default:
	}
	l.result = r
	if r.Outcome.Summary == nil && r.Outcome.Metrics == nil {
		l.result.Outcome = l.outcome
	}
	close(l.ended)
	return true
}
