package bench

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// capture is a running dumpcap writing a classic pcap of loopback UDP.
type capture struct {
	cmd    *exec.Cmd
	path   string
	out    strings.Builder // dumpcap's stderr: its start and its counts
	done   chan struct{}
	outErr chan error
}

// startCapture has dumpcap write the loopback UDP packets filter (a kernel
// BPF filter, so unwanted packets never reach it) keeps, 256 bytes of each
// (headers and a G.711 frame), at nice 19 with a 128 MiB kernel buffer
// so it neither starves the server nor loses packets to its own lateness.
// The file is path, or one in a temporary directory when path is "".
func startCapture(tb testing.TB, filter, path string) *capture {
	tb.Helper()
	requireTool(tb, "dumpcap", "tshark")
	if path == "" {
		path = filepath.Join(tb.TempDir(), "rtp.pcap")
	}
	c := &capture{path: path, done: make(chan struct{})}
	c.cmd = exec.Command("nice", "-n", "19", "dumpcap", "-i", "lo", "-P", "-q", "-s", "256", "-B", "128", "-f", filter, "-w", c.path)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		tb.Fatalf("dumpcap: %v", err)
	}
	started := make(chan struct{})
	go func() {
		defer close(c.done)
		lines := bufio.NewScanner(stderr)
		once := false
		for lines.Scan() {
			c.out.WriteString(lines.Text() + "\n")
			if !once && strings.HasPrefix(lines.Text(), "Capturing on") {
				once = true
				close(started)
			}
		}
		_ = c.cmd.Wait()
		if !once {
			close(started)
		}
	}()
	tb.Cleanup(func() {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
	})
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		tb.Fatalf("dumpcap did not start capturing within 20s")
	}
	select {
	case <-c.done:
		tb.Fatalf("dumpcap exited at start:\n%s", c.out.String())
	default:
	}
	return c
}

var dumpcapCounts = regexp.MustCompile(`received/dropped on interface '[^']*': (\d+)/(\d+)`)

// stop ends the capture and returns what dumpcap received and dropped,
// and the CPU it used.
func (c *capture) stop(tb testing.TB) (received, dropped int, cpu time.Duration) {
	tb.Helper()
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		tb.Fatalf("dumpcap did not stop within 30s of SIGINT")
	}
	if m := dumpcapCounts.FindStringSubmatch(c.out.String()); m != nil {
		received, _ = strconv.Atoi(m[1])
		dropped, _ = strconv.Atoi(m[2])
	}
	if st := c.cmd.ProcessState; st != nil {
		cpu = st.UserTime() + st.SystemTime()
	}
	return received, dropped, cpu
}

func (c *capture) String() string { return fmt.Sprintf("dumpcap %s", c.path) }
