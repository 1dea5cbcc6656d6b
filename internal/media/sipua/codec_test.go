package sipua

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/media/audio"
)

// wideTone is above G.711's 4 kHz band: only a wideband codec carries it.
const wideTone = 6000

func newCodecUA(t *testing.T, codecs []string, h Handler) *UA {
	t.Helper()
	ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), Codecs: codecs})
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

// call dials from a UA offering callerCodecs to one accepting calleeCodecs
// and returns both legs, up.
func call(t *testing.T, callerCodecs, calleeCodecs []string) (out, in *Leg) {
	t.Helper()
	answered := make(chan *Leg, 1)
	callee := newCodecUA(t, calleeCodecs, func(ctx context.Context, inc *Incoming) {
		leg, err := inc.Answer()
		if err != nil {
			t.Error(err)
			close(answered)
			return
		}
		answered <- leg
		<-leg.Done()
	})
	caller := newCodecUA(t, callerCodecs, nil)
	out, err := caller.Dial(context.Background(), target(callee, "+15552223333"), nil)
	if err != nil {
		t.Fatal(err)
	}
	in = <-answered
	if in == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = out.Hangup(context.Background()) })
	return out, in
}

// toneShare reads up to n frames from a and returns the largest share of
// freq in any of them.
func toneShare(t *testing.T, a media.Audio, rate int, freq float64, n int) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	best := 0.0
	for range n {
		f, err := a.Read(ctx)
		if err != nil {
			t.Fatalf("reading: %v", err)
		}
		if audio.RMS(f) > 0.01 {
			best = max(best, audio.ToneShare(f, rate, freq))
		}
	}
	return best
}

func TestG722IsPreferredAndCarriesWideband(t *testing.T) {
	// The caller lists PCMU first; the callee answers with its own first
	// choice, G.722, which both then use.
	out, in := call(t, []string{"PCMU", "PCMA", "G722"}, nil)
	for _, l := range []*Leg{out, in} {
		if l.Codec() != "G722" || l.Rate() != 16000 {
			t.Fatalf("negotiated %s at %d Hz, want G722 at 16000", l.Codec(), l.Rate())
		}
	}
	_ = out.Audio(16000).Write(audio.Tone(wideTone, 16000, time.Second, 0.5))
	if s := toneShare(t, in.Audio(16000), 16000, wideTone, 40); s < 0.8 {
		t.Errorf("a %d Hz tone over G.722 arrived with share %.2f, want it intact", wideTone, s)
	}
}

func TestG711StillNegotiatedAndNarrow(t *testing.T) {
	for _, tc := range []struct {
		caller, callee []string
		want           string
	}{
		{[]string{"PCMU"}, nil, "PCMU"},
		{nil, []string{"PCMA"}, "PCMA"},
		{[]string{"PCMA", "PCMU"}, []string{"PCMU", "PCMA"}, "PCMU"},
	} {
		out, in := call(t, tc.caller, tc.callee)
		if out.Codec() != tc.want || in.Codec() != tc.want || out.Rate() != 8000 || in.Rate() != 8000 {
			t.Errorf("caller %v, callee %v: negotiated %s/%s at %d Hz, want %s at 8000", tc.caller, tc.callee, out.Codec(), in.Codec(), in.Rate(), tc.want)
			continue
		}
		// The same wideband tone cannot cross G.711: the test above can fail.
		_ = out.Audio(16000).Write(audio.Tone(wideTone, 16000, time.Second, 0.5))
		_ = out.Audio(16000).Write(audio.Tone(1000, 16000, time.Second, 0.5))
		if s := toneShare(t, in.Audio(16000), 16000, wideTone, 60); s > 0.2 {
			t.Errorf("%s carried a %d Hz tone (share %.2f)", tc.want, wideTone, s)
		}
	}
}

func TestMediaCodecsNamesAndOrder(t *testing.T) {
	got, err := mediaCodecs(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if want := []string{"G722", "PCMU", "PCMA", "telephone-event"}; !slices.Equal(names, want) {
		t.Errorf("default codecs %v, want %v", names, want)
	}
	if _, err := mediaCodecs([]string{"opus"}); err == nil || !strings.Contains(err.Error(), "G722, PCMU, PCMA") {
		t.Errorf("opus: %v, want an error naming what is supported", err)
	}
}

// On the wire G.722 follows RFC 3551: payload type 9, RTP timestamps at
// 8000 Hz (160 a frame) while each 20 ms packet carries 320 samples coded
// in 160 bytes; the payloads decode to what was sent.
func TestG722PacketsKeepTheRTPClockQuirk(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := &virtualClock{now: start}
	log := &packetLog{clk: clk}
	l := clockLegWith(clk, log, codecG722)
	var recorded []int
	l.SetRecorder(func(caller, ours []int16) { recorded = append(recorded, len(caller), len(ours)) })
	tone := audio.Tone(wideTone, 16000, time.Second, 0.5)
	l.enqueue(outItem{pcm: tone})
	clk.late = func(int) time.Duration { return 0 }
	clk.wake = func() {
		if clk.now.Sub(start) >= time.Second && !l.stopping() {
			l.hangUpAt(clk.now)
		}
	}
	p := newPacer(clk)
	l.loops.Add(1)
	p.add(l)
	p.run()

	if len(log.sent) < 40 {
		t.Fatalf("%d packets in a second", len(log.sent))
	}
	dec := audio.NewG722Decoder()
	var got []int16
	for i, pk := range log.sent {
		if pk.PayloadType != 9 || len(pk.payload) != 160 {
			t.Fatalf("packet %d: payload type %d, %d bytes; want 9 and 160", i, pk.PayloadType, len(pk.payload))
		}
		if i > 0 && pk.Timestamp-log.sent[i-1].Timestamp != 160 {
			t.Fatalf("packet %d: timestamp step %d, want 160", i, pk.Timestamp-log.sent[i-1].Timestamp)
		}
		got = dec.Decode(got, pk.payload)
	}
	if !audio.DetectTone(got[1600:len(tone)-1600], 16000, wideTone) {
		t.Errorf("the packets do not decode to the %d Hz tone", wideTone)
	}
	for i, n := range recorded {
		if n != 320 {
			t.Fatalf("recorder tick %d: %d samples, want 320 (a 16 kHz frame)", i/2, n)
		}
	}
}

// A G.722 leg bridged to a G.711 one: each hears the other at its own rate.
func TestBridgeAcrossRates(t *testing.T) {
	wideOut, wideIn := call(t, nil, nil)
	narrowOut, narrowIn := call(t, []string{"PCMU"}, nil)
	if wideIn.Rate() != 16000 || narrowIn.Rate() != 8000 {
		t.Fatalf("rates %d and %d", wideIn.Rate(), narrowIn.Rate())
	}
	Bridge(wideIn, narrowIn)
	defer Unbridge(wideIn, narrowIn)
	_ = wideOut.Audio(16000).Write(audio.Tone(1000, 16000, 2*time.Second, 0.5))
	heard(t, narrowOut.Audio(8000), 8000, 1000)
	_ = narrowOut.Audio(8000).Write(audio.Tone(440, 8000, 2*time.Second, 0.5))
	heard(t, wideOut.Audio(16000), 16000, 440)
}
