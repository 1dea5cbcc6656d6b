package sipua

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records decodes every line, failing the test on one that is not JSON.
func (l *lockedBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// The libraries' records come out re-leveled, tagged component=sip, with
// one caller and long values cut; past the burst a message is held back and
// counted in one line when its window ends, and the next window lets it
// through again.
func TestLibraryLogRelevelsAndLimits(t *testing.T) {
	var buf lockedBuffer
	h := newLibHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var flush []func()
	h.limit.now = func() time.Time { return now }
	h.limit.afterFunc = func(d time.Duration, f func()) {
		if d != libLogWindow {
			t.Errorf("report scheduled in %v, want at the window's end (%v)", d, libLogWindow)
		}
		flush = append(flush, f)
	}
	log := slog.New(h).With("caller", "TransportLayer").With("caller", "Transport<UDP>")

	datagram := strings.Repeat("\xff junk ", 100)
	for range 100 {
		log.Error("failed to parse", "data", datagram, "error", "not a SIP message")
	}
	log.Info("Network ready")                                  // routine: Debug
	log.Warn("SIP request handler not found", "method", "FOO") // the peer's doing: Info

	recs := buf.records(t)
	if len(recs) != libLogBurst+1 {
		t.Fatalf("%d lines, want %d passed and the handler-not-found line:\n%v", len(recs), libLogBurst+1, recs)
	}
	for _, r := range recs[:libLogBurst] {
		if r["level"] != "WARN" || r["component"] != "sip" || r["caller"] != "Transport<UDP>" || r["msg"] != "failed to parse" {
			t.Errorf("record %v", r)
		}
		if d, _ := r["data"].(string); utf8.RuneCountInString(d) > libLogMaxValue+20 || !strings.HasSuffix(d, fmt.Sprintf("(%d bytes)", len(datagram))) {
			t.Errorf("data not shortened: %q", d)
		}
	}
	if r := recs[libLogBurst]; r["level"] != "INFO" || r["msg"] != "SIP request handler not found" {
		t.Errorf("record %v", r)
	}

	if len(flush) != 1 {
		t.Fatalf("%d reports scheduled, want 1", len(flush))
	}
	now = now.Add(libLogWindow)
	flush[0]()
	recs = buf.records(t)
	sum := recs[len(recs)-1]
	if sum["msg"] != "suppressed similar messages" || sum["message"] != "failed to parse" || sum["suppressed"] != float64(100-libLogBurst) ||
		sum["level"] != "WARN" || sum["component"] != "sip" {
		t.Errorf("report %v", sum)
	}
	log.Error("failed to parse", "data", "x")
	if recs := buf.records(t); len(recs) != libLogBurst+3 || recs[len(recs)-1]["msg"] != "failed to parse" {
		t.Errorf("a new window did not let the message through: %v", recs[len(recs)-1])
	}
	var debug lockedBuffer
	dlog := slog.New(newLibHandler(slog.NewJSONHandler(&debug, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for range 3 * libLogBurst {
		dlog.Debug("UDP read", "data", "x")
	}
	if n := len(debug.records(t)); n != 3*libLogBurst {
		t.Errorf("at debug level %d of %d debug records passed, want all (tracing)", n, 3*libLogBurst)
	}
	for msg, l := range libLevels {
		if l < slog.LevelInfo {
			t.Errorf("libLevels lowers %q below Info, which Enabled does not expect", msg)
		}
	}
}

// A flood of junk at the SIP port: every line is JSON from component=sip,
// no message passes more than its burst per window, and the agent still
// answers afterwards.
func TestJunkDatagramsLogFewLines(t *testing.T) {
	var buf lockedBuffer
	ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := ua.Start(context.Background(), func(ctx context.Context, in *Incoming) { _ = in.Reject(404, "Not Found") }); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	c, err := net.Dial("udp", ua.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	junk := []func(i int) []byte{
		func(i int) []byte { // random bytes
			b := make([]byte, 32+i%400)
			for j := range b {
				b[j] = byte(rand.IntN(256))
			}
			return b
		},
		func(int) []byte { return []byte("hello there\r\n\r\n") },
		func(i int) []byte { // a request without the headers a transaction needs
			return fmt.Appendf(nil, "OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nCall-ID: junk-%d\r\nContent-Length: 0\r\n\r\n", i)
		},
		func(i int) []byte { // a response no transaction waits for
			return fmt.Appendf(nil, "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-%d\r\nFrom: <sip:a@b>;tag=1\r\n"+
				"To: <sip:c@d>;tag=2\r\nCall-ID: junk-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", i, i)
		},
	}
	const sent = 4000
	for i := range sent {
		_, _ = c.Write(junk[i%len(junk)](i))
	}
	// The listener reads in order: once it answers this OPTIONS, every
	// datagram it got before has been parsed.
	probe := "OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP " + c.LocalAddr().String() +
		";branch=z9hG4bK-probe\r\nFrom: <sip:p@127.0.0.1>;tag=p\r\nTo: <sip:probe@127.0.0.1>\r\n" +
		"Call-ID: probe\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
	deadline := time.Now().Add(20 * time.Second)
	buf2 := make([]byte, 4096)
	for answered := false; !answered; {
		if time.Now().After(deadline) {
			t.Fatal("the agent does not answer OPTIONS after the flood")
		}
		_, _ = c.Write([]byte(probe))
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		for {
			n, err := c.Read(buf2)
			if err != nil {
				break // resend the probe
			}
			if strings.HasPrefix(string(buf2[:n]), "SIP/2.0 200") && strings.Contains(string(buf2[:n]), "Call-ID: probe") {
				answered = true
				break
			}
		}
	}
	if err := ua.Close(); err != nil {
		t.Fatal(err)
	}

	recs := buf.records(t)
	windows := 1 + int(time.Since(started)/libLogWindow)
	perMsg := map[string]int{}
	for _, r := range recs {
		if r["component"] != "sip" {
			t.Errorf("line without component=sip: %v", r)
		}
		if r["level"] == "ERROR" {
			t.Errorf("junk logged an ERROR: %v", r)
		}
		perMsg[r["msg"].(string)]++
	}
	for msg, n := range perMsg {
		if msg != "suppressed similar messages" && n > libLogBurst*windows {
			t.Errorf("%q logged %d times, at most %d a window", msg, n, libLogBurst)
		}
	}
	t.Logf("%d junk datagrams sent: %d log lines %v", sent, len(recs), perMsg)
	if len(perMsg) == 0 || perMsg["failed to parse"] == 0 {
		t.Errorf("no parse failure logged at all: the test did not reach the libraries' logs")
	}
}
