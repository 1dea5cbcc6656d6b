package audio

import (
	"math"
	"testing"
	"time"
)

// The filter takes 50 Hz hum down by 40 dB or more at a 200 Hz cut-off,
// and passes 1 kHz whole.
func TestHighPass4(t *testing.T) {
	gain := func(hz float64) float64 {
		hp := HighPass4(200, 8000)
		var in, out float64
		for n := range 16000 {
			x := math.Sin(2 * math.Pi * hz * float64(n) / 8000)
			y := hp[1].Step(hp[0].Step(x))
			if n >= 8000 { // settled
				in, out = in+x*x, out+y*y
			}
		}
		return 10 * math.Log10(out/in)
	}
	if g := gain(50); g > -40 {
		t.Errorf("50 Hz: %.1f dB", g)
	}
	if g := gain(1000); math.Abs(g) > 0.5 {
		t.Errorf("1 kHz: %.1f dB", g)
	}
	s := HighPass4(200, 8000)[0]
	s.Step(math.Inf(1))
	if s.Finite() {
		t.Error("an infinite sample left the memory finite")
	}
	s.Reset()
	if !s.Finite() || s.Step(0) != 0 {
		t.Error("Reset did not clear the memory")
	}
}

// subnormal reports whether x is a subnormal float64: arithmetic on those
// takes a slow microcode path on x86 (tens of times slower per operation).
func subnormal(x float64) bool { return x != 0 && math.Abs(x) < 0x1p-1022 }

// speechThenSilence is 1 s of a tone in noise (int16 scale, as the VAD
// feeds the filter) and then 5 s of digital silence (G.711 0xFF).
func speechThenSilence(rate int) []float64 {
	speech := noise(rate, time.Second, 0.1, 5)
	tone := Tone(300, rate, time.Second, 0.3)
	out := make([]float64, 6*rate)
	for i := range speech {
		out[i] = float64(speech[i]) + float64(tone[i])
	}
	return out
}

// The filter's memory never goes subnormal when speech is followed by
// exact zeros: without the flush it decays through the subnormal range
// and, the recursion keeping it alive, stays there. It ends at zero.
func TestBiquadNoSubnormalOnSilence(t *testing.T) {
	for _, rate := range []int{8000, 16000} {
		hp := HighPass4(200, rate)
		for n, x := range speechThenSilence(rate) {
			y := hp[1].Step(hp[0].Step(x))
			for i := range hp {
				if subnormal(hp[i].z1) || subnormal(hp[i].z2) {
					t.Fatalf("%d Hz, sample %d: section %d memory subnormal (%g, %g)", rate, n, i, hp[i].z1, hp[i].z2)
				}
			}
			if subnormal(y) {
				t.Fatalf("%d Hz, sample %d: output subnormal (%g)", rate, n, y)
			}
		}
		// And it ends at exact zero rather than ringing on at the edge of
		// the threshold, so the silence costs nothing downstream either.
		for i := range hp {
			if hp[i].z1 != 0 || hp[i].z2 != 0 {
				t.Errorf("%d Hz: section %d memory after 5 s of silence (%g, %g), want zeros", rate, i, hp[i].z1, hp[i].z2)
			}
		}
	}
}

// Flushing changes nothing a listener (or the VAD) could tell: on speech
// the output is bit for bit that of the textbook recursion.
func TestBiquadFlushKeepsSpeechExact(t *testing.T) {
	hp := HighPass4(200, 8000)
	ref := hp
	plain := func(f *Biquad, x float64) float64 {
		y := f.b0*x + f.z1
		f.z1 = f.b1*x - f.a1*y + f.z2
		f.z2 = f.b2*x - f.a2*y
		return y
	}
	for n, x := range speechThenSilence(8000)[:8000] {
		got := hp[1].Step(hp[0].Step(x))
		want := plain(&ref[1], plain(&ref[0], x))
		if got != want {
			t.Fatalf("sample %d: %g, textbook %g", n, got, want)
		}
	}
}
