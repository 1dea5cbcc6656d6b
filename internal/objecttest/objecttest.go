// Package objecttest runs a real S3-compatible object store for tests:
// versitygw (github.com/versity/versitygw) over a temporary directory,
// installed by the setup script (scripts/deps.sh, scripts/go-tools.txt)
// into bin/tools. A test gets its endpoint, bucket and credentials, and can
// stop the store and start it again on the same address, as an outage
// that ends.
//
// Without versitygw a test is skipped with a message saying how to install
// it; with CI=true it fails instead: CI never silently skips.
package objecttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Region is the region the store answers for.
const Region = "us-east-1"

// Server is one versitygw process serving one bucket.
type Server struct {
	// Endpoint is the store's base URL (http://HOST:PORT): what
	// AWS_ENDPOINT_URL names.
	Endpoint string
	// Bucket exists, empty, when Start returns.
	Bucket string
	// AccessKey and SecretKey are the root user's credentials.
	AccessKey, SecretKey string

	t    testing.TB
	bin  string
	root string // the backend's directory: one subdirectory a bucket
	meta string // its metadata (a sidecar directory: no extended attributes needed)
	addr string // host:port, kept across restarts

	mu   sync.Mutex
	cmd  *exec.Cmd
	out  *bytes.Buffer // the process's output, shown when the test fails
	done chan struct{} // closed once cmd has exited
}

// Binary finds versitygw: $PARLEY_VERSITYGW, then PATH, then bin/tools
// under the module root (where scripts/deps.sh installs it). It returns ""
// when there is none.
func Binary() string {
	if p := os.Getenv("PARLEY_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			p := filepath.Join(dir, "bin", "tools", "versitygw")
			if _, serr := os.Stat(p); serr == nil {
				return p
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	return ""
}

// Require returns versitygw's path, or ends the test: skipped, or failed
// with CI=true.
func Require(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "versitygw not found (PARLEY_VERSITYGW, PATH or bin/tools): run `make deps` (scripts/deps.sh installs scripts/go-tools.txt)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// Start runs a store on 127.0.0.1 with one empty bucket, stopped when the
// test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartAt(t, "127.0.0.1")
}

// StartAt is Start listening on host: another loopback address
// (127.0.0.2), or one that servers in their own network namespaces reach.
func StartAt(t testing.TB, host string) *Server {
	t.Helper()
	s := &Server{
		t:         t,
		bin:       Require(t),
		root:      t.TempDir(),
		meta:      t.TempDir(),
		Bucket:    "recordings",
		AccessKey: "parleytest",
		SecretKey: "parleytestsecret",
	}
	if err := os.Mkdir(filepath.Join(s.root, s.Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	// The port is the kernel's choice, released for versitygw to bind;
	// another process may take it in between, so a start that fails to
	// listen tries a new one.
	var err error
	for range 5 {
		if s.addr, err = freeAddr(host); err != nil {
			t.Fatal(err)
		}
		if err = s.start(); err == nil {
			s.Endpoint = "http://" + s.addr
			return s
		}
	}
	t.Fatalf("objecttest: versitygw did not start: %v", err)
	return nil
}

// Env is the environment a Parley process needs to reach the store: the
// AWS variables the SDK reads.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + Region,
		"AWS_ENDPOINT_URL=" + s.Endpoint,
	}
}

// SetEnv sets Env in this process for the rest of the test (t.Setenv:
// the test cannot be parallel).
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// URL is the --recordings-url that keeps recordings under prefix in the
// bucket.
func (s *Server) URL(prefix string) string {
	u := url.URL{Scheme: "s3", Host: s.Bucket, Path: "/" + strings.Trim(prefix, "/")}
	return u.String()
}

// Objects lists the keys the bucket holds under prefix, read from the
// backend's directory (not through the store, so it works while the store
// is stopped).
func (s *Server) Objects(prefix string) []string {
	s.t.Helper()
	var keys []string
	base := filepath.Join(s.root, s.Bucket)
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// versitygw's own bookkeeping (multipart uploads, temporaries).
			if strings.HasPrefix(d.Name(), ".sgwtmp") {
				return filepath.SkipDir
			}
			return nil
		}
		k, _ := filepath.Rel(base, p)
		k = filepath.ToSlash(k)
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return keys
}

// Stop ends the store; requests fail (connection refused) until Restart.
// Stopping a stopped store is harmless.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done, out := s.cmd, s.done, s.out
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	if s.t.Failed() {
		s.t.Logf("versitygw output:\n%s", out)
	}
}

// Restart starts a stopped store again on the same address, with the
// objects it held.
func (s *Server) Restart() {
	s.t.Helper()
	// The address was free a moment ago (Stop waited for the process), but
	// the kernel may hold it briefly; a few tries.
	var err error
	for range 20 {
		if err = s.start(); err == nil {
			return
		}
	}
	s.t.Fatalf("objecttest: versitygw did not restart on %s: %v", s.addr, err)
}

// start runs versitygw on s.addr and waits until it accepts connections,
// or it exits.
func (s *Server) start() error {
	out := new(bytes.Buffer)
	cmd := exec.Command(s.bin,
		"--access", s.AccessKey, "--secret", s.SecretKey, "--region", Region,
		"--port", s.addr, "--quiet",
		"posix", "--sidecar", s.meta, s.root)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a test's timeout kill reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			return fmt.Errorf("versitygw exited: %s", strings.TrimSpace(out.String()))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			return errors.New("versitygw did not accept connections within 30 s")
		case <-tick.C:
		}
	}
	s.mu.Lock()
	s.cmd, s.done, s.out = cmd, done, out
	s.mu.Unlock()
	return nil
}

// freeAddr is host with a port the kernel just gave out.
func freeAddr(host string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
