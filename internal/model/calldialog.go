package model

import "time"

// CallDialog is what another process needs to end an answered call's
// carrier leg: the SIP dialog's state, opaque to everything but the
// telephony layer that wrote it. It lives while the call is live: written
// when the leg is answered, deleted when the call ends.
type CallDialog struct {
	OrgID  string
	CallID string
	// State is the telephony layer's encoding of the dialog (JSON).
	State     []byte
	UpdatedAt time.Time
}
