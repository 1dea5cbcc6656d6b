package sipua

import (
	"errors"
	"fmt"
)

// Rejected is a final non-2xx answer to our INVITE (or one we refused to
// send: Code 503 when this server is at its dialog limit).
type Rejected struct {
	Code   int
	Reason string
}

func (e *Rejected) Error() string { return fmt.Sprintf("SIP %d %s", e.Code, e.Reason) }

// ErrNoAnswer: the far end rang (or stayed silent) for the whole ring
// timeout; the INVITE was canceled.
var ErrNoAnswer = errors.New("no answer within the ring timeout")

// ErrTooManyDialogs is returned when this agent is at its dialog limit.
var ErrTooManyDialogs = &Rejected{Code: 503, Reason: "Service Unavailable (dialog limit reached)"}
