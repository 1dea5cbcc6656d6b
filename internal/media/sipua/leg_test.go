package sipua

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/sipgo/sip"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

func newTestUA(t *testing.T, h Handler) *UA {
	t.Helper()
	ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		h = func(ctx context.Context, in *Incoming) { _ = in.Reject(404, "Not Found") }
	}
	if err := ua.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ua.Close() })
	return ua
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func target(ua *UA, user string) Target {
	host, port := splitHostPort(ua.Addr())
	return Target{Host: host, Port: port, User: user, FromUser: "+15550001111", FromDisplay: "Test", RingTimeout: 5 * time.Second}
}

// heard reads frames from a until one carries freq, or fails after 3 s.
func heard(t *testing.T, a media.Audio, rate int, freq float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for {
		f, err := a.Read(ctx)
		if err != nil {
			t.Fatalf("no %v Hz tone heard: %v", freq, err)
		}
		if audio.DetectTone(f, rate, freq) {
			return
		}
	}
}

func TestLegsCarryAudioAndDigitsBothWays(t *testing.T) {
	answered := make(chan *Leg, 1)
	answer := answerAll(t, answered)
	callee := newTestUA(t, func(ctx context.Context, in *Incoming) {
		if in.User != "+15552223333" || in.FromUser != "+15550001111" || in.FromDisplay != "Test" {
			t.Errorf("INVITE for %q from %q %q", in.User, in.FromDisplay, in.FromUser)
		}
		_ = in.Ringing()
		answer(ctx, in)
	})
	caller := newTestUA(t, nil)
	// ringing is best effort: on loopback the 180 can race the 200.
	out, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := <-answered
	if out.Codec() != "G722" || in.Codec() != "G722" || out.Rate() != 16000 || in.Rate() != 16000 {
		t.Errorf("codecs %s at %d Hz and %s at %d Hz, want G722 at 16000 (first offered)", out.Codec(), out.Rate(), in.Codec(), in.Rate())
	}

	// Caller -> callee at 16 kHz, callee -> caller at 8 kHz: resampling on both ends.
	out16, in8 := out.Audio(16000), in.Audio(8000)
	_ = out16.Write(audio.Tone(1000, 16000, time.Second, 0.5))
	heard(t, in8, 8000, 1000)
	_ = in8.Write(audio.Tone(440, 8000, time.Second, 0.5))
	heard(t, out16, 16000, 440)

	if err := out.SendDigits(context.Background(), "1#"); err != nil {
		t.Fatal(err)
	}
	for _, want := range "1#" {
		select {
		case d := <-in.Digits():
			if d != want {
				t.Fatalf("digit %q, want %q", d, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("digit %q not received", want)
		}
	}

	if err := out.Hangup(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("callee leg did not end on BYE")
	}
	if e := in.End(); !e.Remote {
		t.Errorf("callee end %+v, want remote", e)
	}
	if e := out.End(); e.Remote {
		t.Errorf("caller end %+v, want local", e)
	}
	if caller.Active() != 0 || callee.Active() != 0 {
		t.Errorf("dialogs left: caller %d callee %d", caller.Active(), callee.Active())
	}
}

func TestSIPInfoDigitsReachTheLeg(t *testing.T) {
	answered := make(chan *Leg, 1)
	callee := newTestUA(t, answerAll(t, answered))
	caller := newTestUA(t, nil)
	out, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := <-answered
	d := out.dialog.(*diago.DialogClientSession)
	for _, body := range []string{"Signal=7\r\nDuration=160\r\n", "Signal=11\r\n"} {
		req := sip.NewRequest(sip.INFO, d.InviteRequest.Recipient)
		req.AppendHeader(sip.NewHeader("Content-Type", "application/dtmf-relay"))
		req.SetBody([]byte(body))
		res, err := d.Do(context.Background(), req)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("INFO: %v %v", res, err)
		}
	}
	for _, want := range "7#" {
		select {
		case got := <-in.Digits():
			if got != want {
				t.Fatalf("digit %q, want %q", got, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("digit %q not received", want)
		}
	}
	_ = out.Hangup(context.Background())
	<-in.Done()
}

func TestPCMAWhenTheFarEndOffersOnlyPCMA(t *testing.T) {
	answered := make(chan *Leg, 1)
	callee := newTestUA(t, answerAll(t, answered))
	caller, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), Codecs: []string{"PCMA"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Start(context.Background(), func(ctx context.Context, in *Incoming) {}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { caller.Close() })
	out, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := <-answered
	if out.Codec() != "PCMA" || in.Codec() != "PCMA" {
		t.Fatalf("codecs %s / %s, want PCMA", out.Codec(), in.Codec())
	}
	_ = out.Audio(8000).Write(audio.Tone(1000, 8000, time.Second, 0.5))
	heard(t, in.Audio(8000), 8000, 1000)
	_ = out.Hangup(context.Background())
	<-in.Done()
}

func TestDialogLimit(t *testing.T) {
	release := make(chan struct{})
	callee, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MaxDialogs: 1})
	if err != nil {
		t.Fatal(err)
	}
	err = callee.Start(context.Background(), func(ctx context.Context, in *Incoming) {
		leg, err := in.Answer()
		if err != nil {
			return
		}
		select {
		case <-release:
		case <-leg.Done():
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(release); callee.Close() })
	caller := newTestUA(t, nil)
	first, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
	var rej *Rejected
	if !errors.As(err, &rej) || rej.Code != 503 {
		t.Fatalf("second call: %v, want 503", err)
	}
	_ = first.Hangup(context.Background())
}

func TestCallOverTLS(t *testing.T) {
	cert, err := SelfSigned("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	answered := make(chan *Leg, 1)
	callee, err := New(Config{ListenAddr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", TLSCert: cert, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	answer := answerAll(t, answered)
	err = callee.Start(context.Background(), func(ctx context.Context, in *Incoming) {
		if in.Transport != "TLS" {
			t.Errorf("INVITE came over %q", in.Transport)
		}
		answer(ctx, in)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { callee.Close() })
	for _, tc := range []struct {
		name  string
		roots *x509.CertPool
		ok    bool
	}{{"trusted", roots, true}, {"untrusted certificate", x509.NewCertPool(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			caller, err := New(Config{ListenAddr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", TLSRoots: tc.roots, Logger: discard()})
			if err != nil {
				t.Fatal(err)
			}
			if err := caller.Start(context.Background(), func(ctx context.Context, in *Incoming) {}); err != nil {
				t.Fatal(err)
			}
			defer caller.Close()
			host, port := splitHostPort(callee.TLSAddr())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err := caller.Dial(ctx, Target{Host: host, Port: port, Transport: "tls", User: "+15552223333", FromUser: "+15550001111"}, nil)
			if !tc.ok {
				if err == nil {
					_ = out.Hangup(context.Background())
					t.Fatal("a call to a server with an untrusted certificate went through")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			in := <-answered
			_ = out.Audio(8000).Write(audio.Tone(1000, 8000, time.Second, 0.5))
			heard(t, in.Audio(8000), 8000, 1000)
			_ = out.Hangup(context.Background())
			<-in.Done()
		})
	}
}

func splitHostPort(addr string) (string, int) {
	h, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return h, n
}

// A call placed before Start waits for it: sipgo would otherwise bind the
// listener's port for the INVITE, and Start would find it taken (a
// restarted server's queued calls dialed before its SIP listener was up).
func TestDialBeforeStartWaitsForIt(t *testing.T) {
	answered := make(chan *Leg, 1)
	callee := newTestUA(t, answerAll(t, answered))
	caller, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { caller.Close() })
	type dialed struct {
		leg *Leg
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		leg, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
		done <- dialed{leg, err}
	}()
	if err := caller.Start(context.Background(), func(ctx context.Context, in *Incoming) {}); err != nil {
		t.Fatalf("Start after a Dial: %v", err)
	}
	d := <-done
	if d.err != nil {
		t.Fatalf("Dial before Start: %v", d.err)
	}
	in := <-answered
	_ = d.leg.Hangup(context.Background())
	<-in.Done()
}
