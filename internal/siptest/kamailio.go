package siptest

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"
)

//go:embed testdata/kamailio.cfg
var kamailioConfig string

// kamailioModules is where Debian's kamailio package keeps its modules.
const kamailioModules = "/usr/lib/x86_64-linux-gnu/kamailio/modules/"

// RequireKamailio skips the test when kamailio is not installed, saying
// which Debian package to install; with CI=true it fails the test instead.
func RequireKamailio(t testing.TB) {
	t.Helper()
	require(t, "kamailio", "kamailio")
}

// KamailioOptions configure a test registrar.
type KamailioOptions struct {
	// Password is the digest password every user registers with (default
	// "secret"); the user name must be the To user of the REGISTER.
	Password string
	// MaxExpires caps the expiry granted to a registration (default 60 s):
	// a small cap makes clients refresh within a test.
	MaxExpires int
}

// Kamailio is a registrar (and proxy to registered contacts) on 127.0.0.1:
// Kamailio with testdata/kamailio.cfg, bindings kept in memory only, so a
// restart forgets them.
type Kamailio struct {
	t    testing.TB
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// StartKamailio runs Kamailio on a free 127.0.0.1 port (UDP and TCP); it
// is stopped at t.Cleanup.
func StartKamailio(t testing.TB, o KamailioOptions) *Kamailio {
	t.Helper()
	RequireKamailio(t)
	if o.Password == "" {
		o.Password = "secret"
	}
	if o.MaxExpires <= 0 {
		o.MaxExpires = 60
	}
	k := &Kamailio{t: t, dir: t.TempDir()}
	k.startOnFreePort(func() error { return k.writeConfig(o) })
	return k
}

// startOnFreePort picks a free 127.0.0.1 port, has write put the
// configuration for k.port in k.dir, and starts Kamailio, retrying on a
// new port when one was taken meanwhile; Kamailio is stopped at t.Cleanup.
func (k *Kamailio) startOnFreePort(write func() error) {
	t := k.t
	t.Helper()
	var err error
	for try := 0; try < 5; try++ {
		port, closers, perr := freeUDPTCPPort()
		if perr != nil {
			t.Fatal(perr)
		}
		for _, c := range closers {
			_ = c.Close()
		}
		k.port = port
		if err = write(); err != nil {
			t.Fatal(err)
		}
		if err = k.Start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("siptest: kamailio: %v", err)
	}
	t.Cleanup(func() {
		k.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(k.dir, "kamailio.out"))
			t.Logf("siptest: kamailio output:\n%s", tail(string(b), 6000))
		}
	})
}

func (k *Kamailio) writeConfig(o KamailioOptions) error {
	return k.writeTemplate(kamailioConfig, map[string]any{
		"Port": k.port, "Password": o.Password, "MaxExpires": o.MaxExpires, "ModulePath": kamailioModules,
	})
}

// writeTemplate writes the configuration text, a template filled with
// data, as the kamailio.cfg of k's directory.
func (k *Kamailio) writeTemplate(text string, data map[string]any) error {
	tpl, err := template.New("kamailio.cfg").Parse(text)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(k.dir, "kamailio.cfg"))
	if err != nil {
		return err
	}
	if err := tpl.Execute(f, data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Addr is the "127.0.0.1:port" Kamailio listens on (UDP and TCP).
func (k *Kamailio) Addr() string { return fmt.Sprintf("%s:%d", localIP, k.port) }

// Start (re)starts a stopped Kamailio on the same port and waits until it
// listens. StartKamailio has started it already.
func (k *Kamailio) Start() error {
	out, err := os.OpenFile(filepath.Join(k.dir, "kamailio.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	// -DD -E: stay in the foreground, log to stderr; -Y: its runtime files
	// in the test's directory; small memory pools.
	cmd := exec.Command("kamailio", "-f", filepath.Join(k.dir, "kamailio.cfg"), "-DD", "-E",
		"-Y", k.dir, "-w", k.dir, "-m", "32", "-M", "8")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	k.cmd, k.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(k.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := bound([]socket{{"udp", k.port}, {"tcp", k.port}})
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-k.done:
			b, _ := os.ReadFile(filepath.Join(k.dir, "kamailio.out"))
			return fmt.Errorf("kamailio exited at start:\n%s", tail(string(b), 3000))
		default:
		}
		if time.Now().After(deadline) {
			k.Stop()
			return errors.New("kamailio did not listen within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills Kamailio (its bindings are lost with it) and waits for it.
func (k *Kamailio) Stop() {
	if k.cmd == nil {
		return
	}
	_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
	<-k.done
	k.cmd = nil
}

// Output is what Kamailio has logged so far.
func (k *Kamailio) Output() string {
	b, _ := os.ReadFile(filepath.Join(k.dir, "kamailio.out"))
	return strings.TrimSpace(string(b))
}
