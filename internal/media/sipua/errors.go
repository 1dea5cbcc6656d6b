package sipua

import (
	"errors"
	"fmt"

	"github.com/emiago/sipgo"
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

// rejection is the final answer inside a sipgo error (sipgo returns
// ErrDialogResponse by pointer from INVITE, diago by value from REFER).
func rejection(err error) (*Rejected, bool) {
	var p *sipgo.ErrDialogResponse
	var v sipgo.ErrDialogResponse
	switch {
	case errors.As(err, &p):
		return &Rejected{Code: p.Res.StatusCode, Reason: p.Res.Reason}, true
	case errors.As(err, &v):
		return &Rejected{Code: v.Res.StatusCode, Reason: v.Res.Reason}, true
	}
	return nil, false
}
