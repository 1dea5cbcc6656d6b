package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/objecttest"
)

// `parley recordings migrate` moves the data dir's recordings to the
// store, leaves one written to within the last minute, and run again
// moves only what is left; with the store down it fails and keeps them.
func TestRecordingsMigrate(t *testing.T) {
	srv := objecttest.Start(t)
	srv.SetEnv(t)
	dir := t.TempDir()
	write := func(name string, age time.Duration) string {
		p := filepath.Join(dir, "recordings", "org-1", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("RIFF "+name), 0o640); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := write("call-1.wav", time.Hour)
	fresh := write("call-2.wav", 0)
	twin := map[string]string{}
	migrate := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		args = append([]string{"recordings", "migrate", "--data-dir", dir}, args...)
		code := Main(context.Background(), args, &out, &errOut, env(twin))
		return code, out.String(), errOut.String()
	}

	code, out, errOut := migrate("--recordings-url", srv.URL("m"))
	if code != 0 || !strings.Contains(out, "moved 1 recordings (15 bytes)") || !strings.Contains(out, "1 written to within the last minute left on disk; 0 failed") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := srv.Objects(""); !slices.Equal(got, []string{"m/org-1/call-1.wav"}) {
		t.Fatalf("objects %q", got)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("a moved recording is still on disk")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a recording written to just now was moved")
	}

	// The environment twin names the store too; nothing is left to move
	// but the fresh one.
	twin["PARLEY_RECORDINGS_URL"] = srv.URL("m")
	if code, out, _ = migrate(); code != 0 || !strings.Contains(out, "moved 0 recordings") {
		t.Fatalf("again: exit %d: %s", code, out)
	}

	// The store is down: the recording stays, and the run fails saying so.
	srv.Stop()
	at := time.Now().Add(-time.Hour)
	if err := os.Chtimes(fresh, at, at); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = migrate()
	if code != 1 || !strings.Contains(out, "1 failed") || !strings.Contains(errOut, "org-1/call-2.wav: ") || !strings.Contains(errOut, "run it again") {
		t.Fatalf("store down: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("a recording the store did not take left the disk")
	}
	srv.Restart()
	if code, out, _ = migrate(); code != 0 || !strings.Contains(out, "moved 1 recordings") {
		t.Fatalf("store back: exit %d: %s", code, out)
	}

	// Bad input changes nothing: no URL, or not an s3:// one.
	delete(twin, "PARLEY_RECORDINGS_URL")
	write("call-3.wav", time.Hour)
	for _, args := range [][]string{nil, {"--recordings-url", "https://s3.example.com/bucket"}} {
		if code, _, errOut := migrate(args...); code == 0 || !strings.Contains(errOut, "--recordings-url") {
			t.Errorf("%q: exit %d: %s", args, code, errOut)
		}
	}
	var out2, errOut2 bytes.Buffer
	if code := Main(context.Background(), []string{"recordings", "move"}, &out2, &errOut2, env(nil)); code != 2 || !strings.Contains(errOut2.String(), "Usage: parley recordings migrate") {
		t.Errorf("unknown subcommand: exit %d: %s", code, errOut2.String())
	}
	if got := srv.Objects(""); len(got) != 2 {
		t.Errorf("objects after bad input %q", got)
	}
}
