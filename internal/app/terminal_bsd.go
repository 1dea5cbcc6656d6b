//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package app

import "golang.org/x/sys/unix"

// isTerminal reports whether fd is a terminal (it has terminal settings).
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
