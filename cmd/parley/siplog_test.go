package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// Junk at the SIP port of the real process: the log stays JSON from the
// first line to the last (the SIP libraries' lines included, tagged
// component=sip), holds a bounded number of lines, no ERROR, and the server
// still answers SIP and stops cleanly.
func TestSIPJunkKeepsTheLogJSONAndShort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := build(t)
	srv := startServer(t, bin, []string{"PARLEY_DATA_DIR=" + t.TempDir()},
		"--dialer", "sip", "--sip-addr", "127.0.0.1:0", "--rtp-ports", "30500-30599")
	var sipAddr string
	for _, line := range strings.Split(srv.logs.String(), "\n") {
		var rec struct {
			Msg string
			SIP struct{ Listen string }
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "configuration" {
			sipAddr = rec.SIP.Listen
		}
	}
	if sipAddr == "" {
		t.Fatalf("no sip.listen in the configuration line:\n%s", srv.logs)
	}
	before := len(strings.Split(srv.logs.String(), "\n"))

	c, err := net.Dial("udp", sipAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const sent = 5000
	for i := range sent {
		var b []byte
		switch i % 3 {
		case 0:
			b = make([]byte, 20+i%300)
			for j := range b {
				b[j] = byte(rand.IntN(256))
			}
		case 1:
			b = []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		default:
			b = fmt.Appendf(nil, "OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nCall-ID: junk-%d\r\n\r\n", i)
		}
		_, _ = c.Write(b)
	}
	// Once the server answers this, it has read every datagram before it.
	probe := "OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP " + c.LocalAddr().String() +
		";branch=z9hG4bK-probe\r\nFrom: <sip:p@127.0.0.1>;tag=p\r\nTo: <sip:probe@127.0.0.1>\r\n" +
		"Call-ID: probe\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
	buf := make([]byte, 4096)
	eventually(t, "an answer to OPTIONS after the junk", func() bool {
		_, _ = c.Write([]byte(probe))
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		for {
			n, err := c.Read(buf)
			if err != nil {
				return false
			}
			if strings.HasPrefix(string(buf[:n]), "SIP/2.0 200") && strings.Contains(string(buf[:n]), "Call-ID: probe") {
				return true
			}
		}
	})
	srv.cmd.Process.Signal(os.Interrupt)
	<-srv.eof
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGINT: %v", err)
	}

	lines := strings.Split(strings.TrimSpace(srv.logs.String()), "\n")
	sipLines := 0
	for _, line := range lines {
		if firstStartLine(line) {
			continue // the first key and dashboard sign-in, printed once for a person
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		if rec["component"] == "sip" {
			sipLines++
		}
		if rec["level"] == "ERROR" {
			t.Errorf("junk logged an ERROR: %s", line)
		}
	}
	flood := len(lines) - before
	t.Logf("%d junk datagrams: %d log lines from the first datagram to the stop, %d from the SIP libraries", sent, flood, sipLines)
	if sipLines == 0 {
		t.Error("no SIP library line at all: the junk did not reach the libraries' logs")
	}
	if flood > 60 {
		t.Errorf("%d log lines for %d junk datagrams, want a few:\n%s", flood, sent, strings.Join(lines[before-1:], "\n"))
	}
}

// firstStartLine reports whether line is part of what serve prints once, on
// its first start, for a person rather than a log reader: the first API key
// and the dashboard's one-time sign-in (internal/app/serve.go).
func firstStartLine(line string) bool {
	for _, prefix := range []string{"Created organization", "Dashboard sign-in", "email: ", "password: "} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return keyLine.MatchString(line)
}
