package audio

import (
	"math"
	"testing"
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
