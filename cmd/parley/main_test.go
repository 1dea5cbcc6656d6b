package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// build returns the parley binary, compiled once for this test binary
// (CGO_ENABLED=0, as shipped): every process test runs the same build, and
// linking it again for each test cost minutes of `make test`.
func build(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "parley-test-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.path = filepath.Join(dir, "parley")
		// -trimpath as make build and make test's go build ./... have it:
		// the packages they compiled are reused, whatever the tree's path.
		cmd := exec.Command("go", "build", "-trimpath", "-o", built.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("CGO_ENABLED=0 go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// built is the binary build compiles; TestMain removes its directory.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// The real process: first start prints one key, the API answers it, and
// SIGTERM shuts down cleanly (exit 0) after draining.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := build(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "PARLEY_DATA_DIR="+dir, "PARLEY_LOG_FORMAT=json", "PARLEY_SIP_ADDR=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })

	var key, addr string
	lines := bufio.NewScanner(stderr)
	keyLine := regexp.MustCompile(`^pk_live_[0-9A-Za-z]{43}$`)
	for addr == "" && lines.Scan() {
		line := lines.Text()
		if keyLine.MatchString(line) {
			key = line
		}
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
			addr = rec.Addr
		}
	}
	if key == "" || addr == "" {
		t.Fatalf("no key (%q) or address (%q) on stderr", key, addr)
	}
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()

	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/agents", strings.NewReader(`{"name":"Support","promptTemplate":"Help."}`))
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create agent = %d %s", resp.StatusCode, body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var log string
	select {
	case log = <-rest: // stderr read to its end: the process has exited
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30s after SIGTERM")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, log)
	}
	if !strings.Contains(log, `"msg":"stopped"`) {
		t.Errorf("no clean stop in the log:\n%s", log)
	}

	// The CLI works on the data serve left behind.
	out, err := exec.Command(bin, "keys", "create", "--org", "default", "--data-dir", dir).Output()
	if err != nil || !keyLine.MatchString(strings.TrimSpace(string(out))) {
		t.Fatalf("keys create after serve: %v %q", err, out)
	}
}
