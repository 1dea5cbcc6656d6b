package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildParley compiles cmd/parley as `make build` does (CGO-free).
func buildParley(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "parley")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "../cmd/parley") // as make build
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("CGO_ENABLED=0 go build ../cmd/parley: %v\n%s", err, out)
	}
	return bin
}

// server is a running `parley serve`.
type server struct {
	tb      testing.TB
	cmd     *exec.Cmd
	api     string // http://host:port
	sipAddr string // host:port, UDP and TCP
	key     string // the first API key, printed on the first start
	client  *http.Client

	logMu sync.Mutex
	log   bytes.Buffer // every line of stderr

	exited  chan struct{} // closed once the process has exited
	exitErr error         // cmd.Wait's answer, set before exited closes
}

var keyLine = regexp.MustCompile(`^pk_live_[0-9A-Za-z]{43}$`)

// startServer runs `bin serve` on 127.0.0.1 with a fresh data directory and
// args, and waits until it serves HTTP and SIP. The process is killed at
// cleanup if it still runs.
func startServer(tb testing.TB, bin string, args ...string) *server {
	tb.Helper()
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", tb.TempDir(), "--log-format", "json",
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = os.Environ()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	s := &server{tb: tb, cmd: cmd, exited: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}}
	ready := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		lines := bufio.NewScanner(stderr)
		lines.Buffer(make([]byte, 64*1024), 4*1024*1024) // a panic's goroutine dump has long lines
		served := false
		for lines.Scan() {
			line := lines.Text()
			s.logMu.Lock()
			s.log.WriteString(line + "\n")
			if keyLine.MatchString(line) {
				s.key = line
			}
			var rec struct {
				Msg, Addr string
				SIP       struct{ Listen string } // the configuration line's sip.listen, the bound address
			}
			if json.Unmarshal([]byte(line), &rec) == nil {
				switch rec.Msg {
				case "configuration":
					s.sipAddr = rec.SIP.Listen
				case "serving":
					s.api = "http://" + rec.Addr
					if !served {
						served = true
						close(ready)
					}
				}
			}
			s.logMu.Unlock()
		}
	}()
	go func() {
		<-read // every line read before Wait closes the pipe
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	tb.Cleanup(func() {
		s.client.CloseIdleConnections()
		_ = cmd.Process.Kill()
		<-s.exited
	})
	select {
	case <-ready:
	case <-s.exited:
		tb.Fatalf("parley serve exited at start (%v):\n%s", s.exitErr, s.Log())
	case <-time.After(60 * time.Second):
		tb.Fatalf("parley serve did not start within 60s:\n%s", s.Log())
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	// Only the SIP dialer listens for SIP; the last --dialer given wins.
	dialer := ""
	for i, a := range all[:len(all)-1] {
		if a == "--dialer" {
			dialer = all[i+1]
		}
	}
	if s.key == "" || (dialer == "sip" && s.sipAddr == "") {
		tb.Fatalf("no first key or no SIP address in the log:\n%s", s.log.String())
	}
	return s
}

// Log is everything the server wrote to stderr so far.
func (s *server) Log() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.String()
}

// Crashed is what the log says about a Go runtime failure ("" when none):
// a panic or fatal error and the stack that follows it.
func (s *server) Crashed() string {
	log := s.Log()
	for _, marker := range []string{"\npanic: ", "\nfatal error: ", "\n[signal "} {
		if i := strings.Index("\n"+log, marker); i >= 0 {
			return tail(log[max(i-1, 0):], 12000)
		}
	}
	return ""
}

// Exited reports whether the process has exited.
func (s *server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits for the process to exit; it returns the
// exit error (nil: exit 0).
func (s *server) stop(timeout time.Duration) error {
	s.client.CloseIdleConnections()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !s.Exited() {
		return err
	}
	select {
	case <-s.exited:
		return s.exitErr
	case <-time.After(timeout):
		return fmt.Errorf("no exit %v after SIGTERM", timeout)
	}
}

// do sends a JSON request with the first key and decodes the JSON answer
// into out (nil: discarded); a status other than want fails the run.
func (s *server) do(method, path string, body any, want int, out any) {
	s.tb.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.tb.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.api+path, r)
	if err != nil {
		s.tb.Fatal(err)
	}
	req.Header.Set("x-api-key", s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.tb.Fatalf("%s %s = %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.tb.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// calls returns every call record, all pages.
func (s *server) calls() []map[string]any {
	s.tb.Helper()
	var all []map[string]any
	for page := 1; ; page++ {
		var p struct {
			Data        []map[string]any `json:"data"`
			HasNextPage bool             `json:"hasNextPage"`
		}
		s.do("GET", fmt.Sprintf("/v1/calls?pageSize=100&page=%d", page), nil, 200, &p)
		all = append(all, p.Data...)
		if !p.HasNextPage {
			return all
		}
	}
}

// metrics is one scrape of GET /metrics: every sample by its series
// (name{labels} as the text format writes it).
type metrics map[string]float64

// scrape reads GET /metrics (public, no key). It returns an error rather
// than failing, for polling a server that may be dying.
func (s *server) scrape(ctx context.Context) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", s.api+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /metrics = %d", resp.StatusCode)
	}
	m := metrics{}
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[line[:i]] = v
	}
	return m, lines.Err()
}

// pid is the server's process id.
func (s *server) pid() int { return s.cmd.Process.Pid }

// peakRSS is the process's high-water resident set (VmHWM), in bytes; 0
// when /proc does not say.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb * 1024
		}
	}
	return 0
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
