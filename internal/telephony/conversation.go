package telephony

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/model"
)

// Conversation runs an answered call: the conversation engine implements
// it. It never writes the call's record (only its transcript, through a
// call.Transcript): Run returns what the call's end must record, and the
// call ends once it has returned. To end the call itself the conversation
// hangs up with Live.End or Live.Fail (at once: the caller is not kept on
// the line while the summary is written). ctx ends when the call is over
// (the leg ended or was hung up from outside); Run then has
// Live.PostCallBudget to write its summary and return.
type Conversation interface {
	Run(ctx context.Context, l *Live) call.Outcome
}

// Hold is the conversation of a deployment without a conversation engine:
// it keeps the line open, in comfort silence, until the other side hangs
// up or the call reaches the agent's maximum duration.
type Hold struct{}

// Run implements Conversation.
func (Hold) Run(ctx context.Context, l *Live) call.Outcome {
	select {
	case <-ctx.Done():
	case <-l.Session.Done():
	}
	return call.Outcome{}
}

// Live is an answered call as the conversation sees it.
type Live struct {
	Call    model.Call
	Agent   model.Agent
	Session media.Session
	// Rate is the leg's own sample rate, its codec's (8000 for G.711,
	// 16000 for G.722): the conversation hears and speaks at it, so the VAD, the
	// detectors and the line need no resampling. 0 means 16000 (an
	// in-memory session).
	Rate int
	// Answered is when the call was answered (the record's startedAt may
	// not be written yet): transcript entries count their time from it.
	Answered time.Time
	// PostCallBudget is how long the conversation may take, once the call
	// is over, to report its outcome (the summary); the call's end waits
	// that long for it at most.
	PostCallBudget time.Duration
	line           *line
	end            func(cause string)
}

// DefaultPostCallBudget is Phone.PostCallBudget's default.
const DefaultPostCallBudget = 10 * time.Second

// NewLive is a call answered elsewhere than on a telephone line (a test's
// in-memory session): End calls end; transfers are refused.
func NewLive(c model.Call, a model.Agent, s media.Session, end func(cause string)) *Live {
	return &Live{Call: c, Agent: a, Session: s, end: end, Answered: time.Now(), PostCallBudget: DefaultPostCallBudget}
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
// transferred (an in-memory Live or a web call cannot).
func (l *Live) CanTransfer() bool { return l.line != nil && l.line.sip != nil }
