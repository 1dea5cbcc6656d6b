package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// The readable form: time of day, level, message, then key=value with
// groups dotted and values quoted only where they must be; one line each.
func TestTextLogLines(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(newTextLog(&b, slog.LevelInfo))
	log.Debug("hidden")
	log.With("node", "a").WithGroup("call").Info("call ended", "id", "c1", "status", "FAILED",
		slog.Group("cause", "code", "NO_ANSWER", "text", "no one answered"), "took", 1500*time.Millisecond,
		"err", errors.New(`dial "x"`), "empty", "", slog.Group("none"))
	log.Warn("two\nlines", "eq", "a=b")
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		`INFO  call ended node=a call.id=c1 call.status=FAILED call.cause.code=NO_ANSWER call.cause.text="no one answered" call.took=1.5s call.err="dial \"x\"" call.empty=""`,
		`WARN  "two\nlines" eq="a=b"`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		clock, rest, _ := strings.Cut(got[i], " ")
		if _, err := time.Parse("15:04:05.000", clock); err != nil {
			t.Errorf("line %d starts with %q, want the time of day", i, clock)
		}
		if rest != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, rest, want[i])
		}
	}
}

// auto: JSON into a pipe or a buffer (a collector, a test reading the
// log), text on a terminal; text and json force either.
func TestLogFormatChoice(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		format string
		out    any
		text   bool
	}{
		{logAuto, &bytes.Buffer{}, false}, {logAuto, w, false}, {logText, &bytes.Buffer{}, true}, {logJSON, w, false},
	} {
		if got := logsAsText(tc.format, tc.out.(interface{ Write([]byte) (int, error) })); got != tc.text {
			t.Errorf("%s into %T: text %v, want %v", tc.format, tc.out, got, tc.text)
		}
	}
	var b bytes.Buffer
	newLogger(Config{LogLevel: "info", LogFormat: logAuto}, &b).Info("serving", "addr", "127.0.0.1:1")
	var rec map[string]any
	if err := json.Unmarshal(b.Bytes(), &rec); err != nil || rec["msg"] != "serving" {
		t.Errorf("auto into a buffer wrote %q, want JSON", b.String())
	}
	fs := newServeFlags()
	if f := fs.Lookup("log-format"); f == nil || f.DefValue != logAuto {
		t.Errorf("--log-format's default is %v, want auto", f)
	}
	for _, bad := range []string{"yaml", ""} {
		if err := (&Config{MaxConcurrentCalls: 1, LogLevel: "info", LogFormat: bad}).check(); err == nil || !strings.Contains(err.Error(), "--log-format must be auto, text or json") {
			t.Errorf("--log-format %q: %v", bad, err)
		}
	}
}

// Serving on a terminal, the start-up lines are readable text and name
// the dashboard's URL.
func TestServeLogsTextOnATerminal(t *testing.T) {
	tty := openTerminal(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--sip-addr", "127.0.0.1:0", "--dialer", "none"},
			&bytes.Buffer{}, tty.out, env(nil))
	}()
	waitFor(t, func() bool { return strings.Contains(tty.String(), " serving ") })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d:\n%s", code, tty.String())
	}
	var serving string
	for _, l := range strings.Split(tty.String(), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.Contains(l, "{") && strings.Contains(l, `"msg"`) {
			t.Errorf("a JSON line on a terminal: %s", l)
		}
		if strings.Contains(l, "INFO  serving ") {
			serving = l
		}
	}
	if !strings.Contains(serving, " dashboard=http://127.0.0.1:") || !strings.Contains(serving, " addr=127.0.0.1:") {
		t.Errorf("serving line %q: want addr= and dashboard=http://127.0.0.1:PORT/", serving)
	}
}
