// Package logtest is a JSON log a test writes through slog and reads back
// line by line: for tests that check what an operator would read.
package logtest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
)

// Log collects JSON log lines; safe for concurrent writers.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Logger is a logger writing to l at level Info and above: what an
// operator reads by default.
func (l *Log) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Where is every line whose attribute key is value, in order; a line
// that is not JSON fails the test.
func (l *Log) Where(t testing.TB, key string, value any) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, b := range bytes.Split(l.buf.Bytes(), []byte("\n")) {
		if len(b) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("a log line is not JSON: %q: %v", b, err)
		}
		if m[key] == value {
			out = append(out, m)
		}
	}
	return out
}

// Events is each line as "LEVEL msg" ("INFO call placed"), in order.
func Events(lines []map[string]any) []string {
	out := []string{}
	for _, m := range lines {
		level, _ := m[slog.LevelKey].(string)
		msg, _ := m[slog.MessageKey].(string)
		out = append(out, level+" "+msg)
	}
	return out
}
