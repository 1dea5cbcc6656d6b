package voicemail

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/provider/tts/espeak"
)

// Test audio: espeak-ng speech, and tones and noise made here.

var rates = []int{16000, 8000}

// need skips the test when espeak-ng is not installed, and fails it on CI.
func need(t testing.TB) {
	t.Helper()
	if err := espeak.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("espeak-ng is required on CI: %v", err)
		}
		t.Skipf("skipping: %v (apt-get install %s)", err, espeak.Package)
	}
}

var (
	spokenMu sync.Mutex
	spoken   = map[tts.Request][]int16{} // → 16 kHz speech
)

// speak returns text spoken by espeak-ng's default voice at rate.
func speak(t testing.TB, text string, rate int) []int16 {
	t.Helper()
	return speakAs(t, "", text, rate)
}

// speakAs returns text spoken by an espeak-ng voice at rate: synthesized at
// 16 kHz (once per test binary) and resampled for 8 kHz.
func speakAs(t testing.TB, voice, text string, rate int) []int16 {
	t.Helper()
	need(t)
	r := tts.Request{Text: text, Voice: voice}
	spokenMu.Lock()
	pcm, ok := spoken[r]
	spokenMu.Unlock()
	if !ok {
		_, err := espeak.New(espeak.Config{}).Synthesize(context.Background(), r, 16000,
			func(p []int16) error { pcm = append(pcm, p...); return nil })
		if err != nil {
			t.Fatalf("espeak-ng %q %q: %v", voice, text, err)
		}
		spokenMu.Lock()
		spoken[r] = pcm
		spokenMu.Unlock()
	}
	if rate == 16000 {
		return pcm
	}
	return audio.NewResampler(16000, rate).Process(nil, pcm)
}

func concat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// mix adds b, scaled by gain, into a copy of a from sample off, clipping.
func mix(a, b []int16, off int, gain float64) []int16 {
	out := append([]int16(nil), a...)
	for i, v := range b {
		if j := off + i; j < len(out) {
			out[j] = int16(math.Max(math.MinInt16, math.Min(math.MaxInt16, math.Round(float64(out[j])+gain*float64(v)))))
		}
	}
	return out
}

// noise returns d of white Gaussian noise at rms dBFS.
func noise(rate int, d time.Duration, dbfs float64, seed uint64) []int16 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]int16, int64(d)*int64(rate)/int64(time.Second))
	sd := 32768 * math.Pow(10, dbfs/20)
	for i := range out {
		out[i] = int16(math.Max(math.MinInt16, math.Min(math.MaxInt16, math.Round(sd*rng.NormFloat64()))))
	}
	return out
}

// amp is the peak amplitude (fraction of full scale) of a sine at rms dBFS.
func amp(dbfs float64) float64 { return math.Sqrt2 * math.Pow(10, dbfs/20) }

// twoTone is two sines at the given peak amplitudes, as a DTMF digit.
func twoTone(f1, f2 float64, rate int, d time.Duration, a1, a2 float64) []int16 {
	return mix(audio.Tone(f1, rate, d, a1), audio.Tone(f2, rate, d, a2), 0, 1)
}

func samplesOf(rate int, d time.Duration) int {
	return int(int64(d) * int64(rate) / int64(time.Second))
}

// feed gives pcm to d in 20 ms frames and returns the state after each.
func feed(d *Detector, rate int, pcm []int16) []State {
	n := rate / 50
	out := make([]State, 0, len(pcm)/n)
	for i := 0; i+n <= len(pcm); i += n {
		out = append(out, d.Frame(pcm[i:i+n]))
	}
	return out
}

// at is the time at the end of frame i.
func at(i int) time.Duration { return time.Duration(i+1) * 20 * time.Millisecond }

// decided returns the first frame with a verdict, and that state (-1 if none).
func decided(states []State) (int, State) {
	for i, s := range states {
		if s.Verdict != Undecided {
			return i, s
		}
	}
	return -1, State{}
}
