package wer

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses, as /proc allows.
	line := "1234 (a (b) c) S 77 1234 1234 0 -1 4194304 100 0 0 0 250 50 30 20 20 0 1 0 100 1000 10 18446744073709551615\n"
	s, ok := parseProcStat(line)
	if !ok || s.ppid != 77 || s.cpu != 3500*time.Millisecond {
		t.Errorf("parseProcStat = %+v, %v; want ppid 77, 3.5 s", s, ok)
	}
	for _, bad := range []string{"", "1 (x", "1 (x) S 7", "1 (x) S z 1 1 0 -1 0 0 0 0 0 1 1 1 1"} {
		if s, ok := parseProcStat(bad); ok {
			t.Errorf("parseProcStat(%q) = %+v", bad, s)
		}
	}
}

// TestCPUTimeCountsRunningChildren: a child that spins is counted while it
// runs (a recognizer's long-lived decoder), not only once waited for.
func TestCPUTimeCountsRunningChildren(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	// Wait for the condition, not a duration: the child gets a tick of
	// CPU however busy the machine is.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if descendantsCPU(os.Getpid()) > 0 {
			return
		}
	}
	t.Fatal("a spinning child's CPU never showed")
}
