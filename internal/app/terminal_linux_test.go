package app

import (
	"bufio"
	"os"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// terminal is a pseudo-terminal: out is its terminal side (what a
// program writing to a console gets), whose output the test reads back.
type terminal struct {
	out  *os.File
	mu   sync.Mutex
	text []byte
}

func (t *terminal) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.text)
}

func openTerminal(t *testing.T) *terminal {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		t.Fatal(err)
	}
	term := &terminal{out: pts}
	read := make(chan struct{})
	go func() {
		defer close(read)
		s := bufio.NewReader(ptmx)
		for {
			line, err := s.ReadBytes('\n')
			term.mu.Lock()
			term.text = append(term.text, line...)
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		pts.Close()
		ptmx.Close() // ends the reader
		<-read
	})
	if !isTerminal(pts.Fd()) {
		t.Fatal("isTerminal is false for a pseudo-terminal")
	}
	return term
}

func TestIsTerminal(t *testing.T) {
	tty := openTerminal(t)
	if !isTerminal(tty.out.Fd()) || !logsAsText(logAuto, tty.out) {
		t.Error("a terminal is not taken for one")
	}
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, notTTY := range []*os.File{f, null} {
		if isTerminal(notTTY.Fd()) || logsAsText(logAuto, notTTY) {
			t.Errorf("%s is taken for a terminal", notTTY.Name())
		}
	}
}
