package call

import (
	"context"
	"fmt"
)

// DialRequest is what the telephony layer needs to place an outbound call.
type DialRequest struct {
	CallID       string
	OrgID        string
	AgentID      string
	FromNumber   string
	ToNumber     string
	CallerIDName string // display name of the SIP From header; "" for none
	SIPTrunkID   *string
	// Loopback sends the call over the built-in loopback trunk whatever
	// SIPTrunkID says: a simulated caller's call to the agent under test.
	Loopback bool
}

// Dialer places outbound calls. The real one speaks SIP (media/sip); tests
// use calltest.Dialer.
type Dialer interface {
	// Dial places the call and returns once it is answered, with the Line,
	// or has failed, with a *DialError. ringing is called (at most once)
	// when the far end rings, with what another server needs to cancel the
	// call should this one be lost (nil: nothing; see LostLegs), encoded
	// by the Dialer that alone reads it. Canceling ctx abandons a call not
	// yet answered.
	Dial(ctx context.Context, req DialRequest, ringing func(state []byte)) (Line, error)
}

// Line is an answered call.
type Line interface {
	// Ended is closed when the call is over, whoever ended it.
	Ended() <-chan struct{}
	// Result says how the call ended, with the conversation's outcome;
	// valid once Ended is closed, which is after the conversation is over.
	Result() Result
	// Hangup ends the call from our side with cause.
	Hangup(cause string)
	// RecordingURL is where the call's recording will be fetched ("" when
	// it is not recorded).
	RecordingURL() string
}

// Result is how an answered call ended.
type Result struct {
	Status       string // COMPLETED, TRANSFERRED or FAILED
	HangupCause  string
	ErrorMessage string
	// Outcome is what the conversation reported once it was over.
	Outcome Outcome
}

// Outcome is what a conversation reports when it is over, instead of
// writing to the call's record itself: the queue writes it with the call's
// end, in one transaction.
type Outcome struct {
	// HangupCause and ErrorMessage say why the conversation ended the call
	// ("" when it did not: the caller hung up, or the call was ended from
	// outside). The line's own record of who hung up first wins.
	HangupCause  string
	ErrorMessage string
	// Summary is the model's summary of the call (nil: none).
	Summary *string
	// Metrics are the call's usage and latency figures (nil: none).
	Metrics map[string]any
	// Variables are values the conversation learned (a flow's extracted
	// variables and tool results), merged into the call's variables.
	Variables map[string]any
}

// DialError is a call that was not answered: busy, no answer, a SIP error.
type DialError struct {
	Cause   string // CauseBusy, CauseNoAnswer, CauseSIPError, CauseDialFailed
	Message string
	// Status is the final status (FAILED when empty; CANCELED for an
	// inbound caller who hung up while it rang).
	Status string
}

func (e *DialError) Error() string { return fmt.Sprintf("%s: %s", e.Cause, e.Message) }
