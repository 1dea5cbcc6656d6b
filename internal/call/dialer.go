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
}

// Dialer places outbound calls. The real one speaks SIP (media/sip); tests
// use calltest.Dialer.
type Dialer interface {
	// Dial places the call and returns once it is answered, with the Line,
	// or has failed, with a *DialError. ringing is called (at most once)
	// when the far end rings. Canceling ctx abandons a call not yet answered.
	Dial(ctx context.Context, req DialRequest, ringing func()) (Line, error)
}

// Line is an answered call.
type Line interface {
	// Ended is closed when the call is over, whoever ended it.
	Ended() <-chan struct{}
	// Result says how the call ended; valid once Ended is closed.
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
