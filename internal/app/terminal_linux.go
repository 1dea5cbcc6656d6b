package app

import "golang.org/x/sys/unix"

// isTerminal reports whether fd is a terminal (it has terminal settings).
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}
