package model

import "time"

// IdempotencyWindow is how long an Idempotency-Key is remembered: a
// retry within it answers the first response again.
const IdempotencyWindow = 24 * time.Hour

// IdempotencyKey is a client's Idempotency-Key on a create request (POST
// /calls, POST /messages) and what the first request with it created. It
// is written in the transaction that creates the resource, so a key is
// never stored without its resource nor a resource without its key.
type IdempotencyKey struct {
	OrgID string
	// Scope is the route the key was used on ("POST /v1/calls"): the same
	// key on another route is another key.
	Scope string
	Key   string
	// RequestHash is the hex SHA-256 of the request body in canonical form
	// (keys sorted, no insignificant space): a retry must match it.
	RequestHash string
	// ResourceID is the call or message the first request created.
	ResourceID string
	// StatusCode and Response are the first response; Response is nil
	// until it is known (a message's answer waits for its delivery, which
	// comes after the commit).
	StatusCode int
	Response   []byte
	CreatedAt  time.Time
}
