package store

import "errors"

// Sentinel errors. Implementations wrap these; callers test with errors.Is.
var (
	// ErrNotFound: no such row in the organization.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a uniqueness rule would be broken.
	ErrConflict = errors.New("conflict")
)
