package webrtc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/webrtc"
	"github.com/parley-voice/parley/internal/media/webrtc/webrtctest"
)

func endpoint(t *testing.T, mod ...func(*webrtc.Config)) *webrtc.Endpoint {
	t.Helper()
	cfg := webrtc.Config{Address: net.IPv4(127, 0, 0, 1), PortMin: 31000, PortMax: 31099}
	for _, m := range mod {
		m(&cfg)
	}
	e, err := webrtc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// call connects a test browser offering codecs to a new peer.
func call(t *testing.T, e *webrtc.Endpoint, codecs ...string) (*webrtctest.Browser, *webrtc.Peer, string) {
	t.Helper()
	b := webrtctest.New(t, codecs...)
	o, err := webrtc.ParseOffer(b.Offer())
	if err != nil {
		t.Fatal(err)
	}
	p, answer, err := e.Answer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Hangup(context.Background()) })
	b.Accept(answer)
	wait(t, "the browser to connect", p.Connected())
	wait(t, "the browser to see the connection", b.Connected())
	wait(t, "the data channel to open", b.Open())
	return b, p, answer
}

func wait(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("waited 15 s for %s", what)
	}
}

// hears reads a until a frame carries freq (at most 5 s of frames).
func hears(t *testing.T, a media.Audio, rate int, freq float64) bool {
	t.Helper()
	for range 250 {
		f, err := a.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if audio.DetectTone(f, rate, freq) {
			return true
		}
	}
	return false
}

// A browser offering PCMU first and G.722 too talks G.722 at 16 kHz: a
// 6 kHz tone, which G.711 cannot carry, crosses both ways, and the
// recorder gets both sides in step.
func TestG722BothWays(t *testing.T) {
	b2, p2, answer := call(t, endpoint(t), "PCMU", "G722")
	if p2.Codec() != "G722" || p2.Rate() != 16000 {
		t.Fatalf("negotiated %s at %d, want G722 at 16000; answer:\n%s", p2.Codec(), p2.Rate(), answer)
	}
	var farEnd, ours int
	rec := make(chan struct{})
	p2.SetRecorder(func(f, o []int16) {
		if audio.DetectTone(f, 16000, 6000) {
			farEnd++
		}
		if audio.DetectTone(o, 16000, 5000) {
			ours++
		}
		if farEnd > 5 && ours > 5 {
			select {
			case <-rec:
			default:
				close(rec)
			}
		}
	})
	b2.Play(audio.Tone(6000, 16000, 2*time.Second, 0.3))
	if !hears(t, p2.Audio(16000), 16000, 6000) {
		t.Fatal("Parley did not hear the browser's 6 kHz tone")
	}
	if err := p2.Audio(16000).Write(audio.Tone(5000, 16000, time.Second, 0.3)); err != nil {
		t.Fatal(err)
	}
	if err := p2.Audio(16000).Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	wait(t, "the recorder to get both tones", rec)
	deadline := time.Now().Add(5 * time.Second)
	for !heardTone(b2.Heard(), 16000, 5000) {
		if time.Now().After(deadline) {
			t.Fatal("the browser did not hear Parley's 5 kHz tone")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func heardTone(pcm []int16, rate int, freq float64) bool {
	n := rate / 50
	for i := 0; i+n <= len(pcm); i += n {
		if audio.DetectTone(pcm[i:i+n], rate, freq) {
			return true
		}
	}
	return false
}

// A browser offering only PCMU talks PCMU at 8 kHz; the engine may still
// ask for 16 kHz audio, resampled.
func TestPCMU(t *testing.T) {
	b, p, answer := call(t, endpoint(t), "PCMU")
	if p.Codec() != "PCMU" || p.Rate() != 8000 {
		t.Fatalf("negotiated %s at %d, want PCMU at 8000; answer:\n%s", p.Codec(), p.Rate(), answer)
	}
	b.Play(audio.Tone(1000, 8000, 2*time.Second, 0.3))
	if !hears(t, p.Audio(16000), 16000, 1000) {
		t.Fatal("Parley did not hear the browser's 1 kHz tone at 16 kHz")
	}
}

// The browser hanging up ends the leg as the far end's doing; Parley
// hanging up ends the browser's track and the leg as ours.
func TestHangUpEitherSide(t *testing.T) {
	e := endpoint(t)
	b, p, _ := call(t, e, "G722")
	b.Close()
	wait(t, "the leg to end", p.Done())
	t.Logf("browser hung up: %+v", p.End())
	if end := p.End(); !end.Remote {
		t.Errorf("browser hung up: end %+v, want remote", end)
	}
	if _, err := p.Audio(16000).Read(context.Background()); err != media.ErrEnded {
		t.Errorf("read after the end: %v", err)
	}

	b2, p2, _ := call(t, e, "G722")
	if err := p2.Hangup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if end := p2.End(); end.Remote {
		t.Errorf("Parley hung up: end %+v, want ours", end)
	}
	wait(t, "the browser to see the hang-up", b2.Ended())
}

// A browser that never connects (it never got the answer) is given up on
// after ConnectTimeout.
func TestBrowserThatNeverConnects(t *testing.T) {
	e := endpoint(t, func(c *webrtc.Config) { c.ConnectTimeout = 300 * time.Millisecond })
	b := webrtctest.New(t, "G722")
	o, err := webrtc.ParseOffer(b.Offer())
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := e.Answer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, "the leg to give up", p.Done())
	if end := p.End(); end.Remote || end.Reason == "" {
		t.Errorf("end %+v, want ours with a reason", end)
	}
}

// Digits: ours are played in band as DTMF (the browser hears both tones
// of 5); the browser's RFC 4733 events become digits.
func TestDigitsInBand(t *testing.T) {
	b, p, _ := call(t, endpoint(t), "G722")
	if err := p.SendDigits(context.Background(), "5"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !(heardTone(b.Heard(), 16000, 770) && heardTone(b.Heard(), 16000, 1336)) {
		if time.Now().After(deadline) {
			t.Fatal("the browser did not hear DTMF 5 (770 and 1336 Hz)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.SendDigits(context.Background(), "x"); err == nil {
		t.Error("an invalid digit was sent")
	}
}
