//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package app

// isTerminal is false where Parley cannot tell: --log-format auto writes
// JSON there (--log-format text chooses the readable form).
func isTerminal(uintptr) bool { return false }
