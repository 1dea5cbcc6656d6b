package telephony

import (
	"context"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/model"
)

// Conversation runs an answered call: the conversation engine implements
// it. Run returns when the conversation is over; the call ends then (if it
// has not already) with the cause given to Live.End, or when ctx ends.
type Conversation interface {
	Run(ctx context.Context, l *Live)
}

// Hold is the conversation of a deployment without a conversation engine:
// it keeps the line open, in comfort silence, until the other side hangs
// up or the call reaches the agent's maximum duration.
type Hold struct{}

// Run implements Conversation.
func (Hold) Run(ctx context.Context, l *Live) {
	select {
	case <-ctx.Done():
	case <-l.Session.Done():
	}
}

// Live is an answered call as the conversation sees it.
type Live struct {
	Call    model.Call
	Agent   model.Agent
	Session media.Session
	line    *line
	end     func(cause string)
}

// NewLive is a call answered elsewhere than on a telephone line (a test's
// in-memory session): End calls end; transfers are refused.
func NewLive(c model.Call, a model.Agent, s media.Session, end func(cause string)) *Live {
	return &Live{Call: c, Agent: a, Session: s, end: end}
}

// End ends the call from our side with cause (END_CALL_TOOL,
// SILENCE_TIMEOUT, ...); status is COMPLETED unless cause is TRANSFERRED.
func (l *Live) End(cause string) {
	if l.line == nil {
		l.end(cause)
		return
	}
	l.line.Hangup(cause)
}

// Fail ends the call from our side as FAILED with cause and a message for
// the record's errorMessage (a speech or language provider that stopped
// working, say). On an in-memory Live it calls the end function with cause.
func (l *Live) Fail(cause, message string) {
	if l.line == nil {
		l.end(cause)
		return
	}
	l.line.hangup(cause, model.CallFailed, message)
}

// CanTransfer reports whether the call is on a telephone line that can be
// transferred (an in-memory Live cannot).
func (l *Live) CanTransfer() bool { return l.line != nil }
