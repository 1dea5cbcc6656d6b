package store

import "errors"

// Sentinel errors. Implementations wrap these; callers test with errors.Is.
var (
	// ErrNotFound: no such row in the organization.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a uniqueness rule would be broken.
	ErrConflict = errors.New("conflict")
)

// ErrClosed: the store was closed (the server is stopping); it takes no
// more work, so a write is not tried again.
var ErrClosed = errors.New("store closed")

// ErrUnavailable: the database cannot be reached or cannot take the work
// right now (connection refused or lost, the server shutting down or out of
// connections, a busy or full disk). The same request may succeed later;
// the API answers it 503 with Retry-After, the call plane retries.
var ErrUnavailable = errors.New("database unavailable")
