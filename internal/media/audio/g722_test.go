package audio

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// g722Delay is the codec's delay in samples: the two 24-tap QMFs.
const g722Delay = 22

// roundTrip encodes pcm to G.722 and decodes it again.
func g722RoundTrip(pcm []int16) (codes []byte, out []int16) {
	codes = NewG722Encoder().Encode(nil, pcm)
	return codes, NewG722Decoder().Decode(nil, codes)
}

// snr is the signal-to-noise ratio in dB of got against want, got delayed
// by g722Delay samples, skipping the first skip samples (the adaptation).
func snr(want, got []int16, skip int) float64 {
	var sig, noise float64
	for i := skip; i+g722Delay < len(got) && i < len(want); i++ {
		w, g := float64(want[i]), float64(got[i+g722Delay])
		sig += w * w
		noise += (w - g) * (w - g)
	}
	return 10 * math.Log10(sig/noise)
}

func TestG722TonesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		freq   float64
		minSNR float64
	}{
		{440, 50}, {1000, 40}, {3000, 35}, {6000, 22},
	} {
		in := Tone(tc.freq, 16000, time.Second, 0.5)
		codes, out := g722RoundTrip(in)
		if len(codes) != len(in)/2 || len(out) != len(in) {
			t.Fatalf("%v Hz: %d samples -> %d bytes -> %d samples", tc.freq, len(in), len(codes), len(out))
		}
		got := snr(in, out, 1600)
		t.Logf("%v Hz tone: SNR %.1f dB", tc.freq, got)
		if got < tc.minSNR {
			t.Errorf("%v Hz tone: SNR %.1f dB, want at least %v", tc.freq, got, tc.minSNR)
		}
		// A tone G.711's 8 kHz cannot carry survives G.722 as itself.
		if tc.freq > 4000 && !DetectTone(out[1600:], 16000, tc.freq) {
			t.Errorf("%v Hz tone not detected after the round trip", tc.freq)
		}
	}
}

func TestG722SpeechRoundTrip(t *testing.T) {
	speech := espeakSpeech(t, "Your appointment is on Tuesday the fourth at half past three.")
	_, out := g722RoundTrip(speech)
	got := snr(speech, out, 0)
	t.Logf("espeak-ng speech, %v: SNR %.1f dB", time.Duration(len(speech))*time.Second/16000, got)
	if got < 25 {
		t.Errorf("speech SNR %.1f dB, want at least 25", got)
	}
}

// espeakSpeech is text spoken by espeak-ng, resampled to 16 kHz.
func espeakSpeech(t *testing.T, text string) []int16 {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("espeak-ng is required on CI")
		}
		t.Skip("skipping: espeak-ng is not installed (apt-get install espeak-ng)")
	}
	b, err := exec.Command("espeak-ng", "--stdout", text).Output()
	if err != nil {
		t.Fatalf("espeak-ng: %v", err)
	}
	w, err := ReadWAV(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return NewResampler(w.Rate, 16000).Process(nil, w.Channels[0])
}

func TestG722OddLengthsCarryOver(t *testing.T) {
	in := Tone(1000, 16000, 100*time.Millisecond, 0.3)
	whole := NewG722Encoder().Encode(nil, in)
	e := NewG722Encoder()
	var split []byte
	for rest := in; len(rest) > 0; {
		n := min(len(rest), 7) // odd pieces: a sample waits for its pair
		split = e.Encode(split, rest[:n])
		rest = rest[n:]
	}
	if !bytes.Equal(whole, split) {
		t.Fatal("encoding in odd pieces differs from encoding at once")
	}
}

// The Asterisk prompts ship as 8 kHz WAV and as 16 kHz G.722 from the
// same recordings: the decoded G.722, brought to 8 kHz, must follow the
// WAV's loudness envelope.
func TestG722DecodesAsteriskPrompts(t *testing.T) {
	const dir = "/usr/share/asterisk/sounds/en_US_f_Allison"
	files, _ := filepath.Glob(filepath.Join(dir, "*.g722"))
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("asterisk-core-sounds-en-g722 is required on CI")
		}
		t.Skip("skipping: install asterisk-core-sounds-en-g722 and asterisk-core-sounds-en-wav")
	}
	checked := 0
	for _, f := range files {
		if checked == 20 {
			break
		}
		wf, err := os.Open(f[:len(f)-len(".g722")] + ".wav")
		if err != nil {
			continue
		}
		w, err := ReadWAV(wf)
		wf.Close()
		if err != nil || w.Rate != 8000 || len(w.Channels[0]) < 8000 {
			continue
		}
		codes, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wide := NewG722Decoder().Decode(nil, codes)
		if d := len(wide) - 2*len(w.Channels[0]); d < -1600 || d > 1600 {
			t.Errorf("%s: %d samples at 16 kHz against %d at 8 kHz", filepath.Base(f), len(wide), len(w.Channels[0]))
			continue
		}
		narrow := NewResampler(16000, 8000).Process(nil, wide)
		c := envelopeCorrelation(narrow, w.Channels[0], 160)
		if c < 0.9 {
			t.Errorf("%s: envelope correlation %.3f with the WAV, want at least 0.9", filepath.Base(f), c)
		}
		// The same level, give or take the mastering of the two packages.
		if r := RMS(narrow) / RMS(w.Channels[0]); r < 0.7 || r > 2 {
			t.Errorf("%s: decoded at %.2f times the WAV's level", filepath.Base(f), r)
		}
		if checked < 3 {
			t.Logf("%s: envelope correlation %.3f", filepath.Base(f), c)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no .g722 prompt had a matching 8 kHz WAV")
	}
}

// envelopeCorrelation is the best Pearson correlation, over small lags,
// of a's and b's RMS per block of n samples.
func envelopeCorrelation(a, b []int16, n int) float64 {
	env := func(x []int16) []float64 {
		var out []float64
		for i := 0; i+n <= len(x); i += n {
			out = append(out, RMS(x[i:i+n]))
		}
		return out
	}
	ea, eb := env(a), env(b)
	best := -1.0
	for lag := -5; lag <= 5; lag++ {
		var xs, ys []float64
		for i := range ea {
			if j := i + lag; j >= 0 && j < len(eb) {
				xs, ys = append(xs, ea[i]), append(ys, eb[j])
			}
		}
		best = math.Max(best, pearson(xs, ys))
	}
	return best
}

func pearson(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func FuzzG722Decode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x00, 0xff, 0x3f, 0xc0})
	f.Add(NewG722Encoder().Encode(nil, Tone(6000, 16000, 20*time.Millisecond, 1)))
	f.Fuzz(func(t *testing.T, codes []byte) {
		d := NewG722Decoder()
		out := d.Decode(nil, codes)
		if len(out) != 2*len(codes) {
			t.Fatalf("%d bytes decoded to %d samples", len(codes), len(out))
		}
		// The decoder's state stays bounded: decoding the same codes again
		// from a fresh decoder gives the same samples.
		again := NewG722Decoder().Decode(nil, codes)
		if !slicesEqual(out, again) {
			t.Fatal("decoding is not deterministic")
		}
		// Any state the codes left decodes silence toward silence.
		tail := d.Decode(nil, NewG722Encoder().Encode(nil, make([]int16, 3200)))
		if r := RMS(tail[len(tail)-320:]); r > 0.05 {
			t.Fatalf("after the codes, encoded silence decodes at RMS %.3f", r)
		}
	})
}

func slicesEqual(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
