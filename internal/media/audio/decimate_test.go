package audio

import (
	"math"
	"testing"
	"time"
)

// response is the gain in dB of the FIR taps at f cycles per sample.
func response(taps []float32, f float64) float64 {
	var re, im float64
	for n, v := range taps {
		w := 2 * math.Pi * f * float64(n)
		re += float64(v) * math.Cos(w)
		im -= float64(v) * math.Sin(w)
	}
	return 10 * math.Log10(re*re+im*im)
}

// filterFigures measures a 3:1 decimation filter (at the input rate): the
// peak-to-peak ripple in dB over the passband, 0 to 0.425 of the output
// rate (3.4 kHz at 8 kHz), and the least attenuation in dB from the output
// rate's Nyquist frequency (4 kHz) to the input's.
func filterFigures(taps []float32) (ripple, stop float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for f := 0.0; f <= 0.425/3; f += 0.0001 {
		g := response(taps, f)
		lo, hi = math.Min(lo, g), math.Max(hi, g)
	}
	ripple = hi - lo
	stop = math.Inf(1)
	for f := 0.5 / 3; f <= 0.5; f += 0.00005 {
		stop = math.Min(stop, -response(taps, f))
	}
	return ripple, stop
}

// The 3:1 decimator's filter meets the windowed sinc's figures, at least
// as well as the windowed sinc itself does, with fewer taps: docs/benchmarks.md
// and the Resampler's doc quote 0.3 dB of passband ripple to 3.4 kHz and
// some 80 dB of stopband from 4 kHz at 8 kHz.
func TestDecimator3Figures(t *testing.T) {
	half := NewResampler(24000, 8000).sym
	if half == nil {
		t.Fatal("24000 -> 8000 does not use the 3:1 decimator")
	}
	taps := append([]float32(nil), half[:]...)
	for i := len(half) - 2; i >= 0; i-- {
		taps = append(taps, half[i])
	}
	ripple, stop := filterFigures(taps)
	sinc := newSincResampler(24000, 8000)
	sincRipple, sincStop := filterFigures(sinc.rows)
	t.Logf("decimator: %d taps, ripple %.3f dB, stopband %.2f dB; windowed sinc: %d taps, ripple %.3f dB, stopband %.2f dB",
		len(taps), ripple, stop, len(sinc.rows)-1, sincRipple, sincStop)
	if ripple > 0.3 || ripple > sincRipple {
		t.Errorf("passband ripple %.3f dB, want at most 0.3 and the windowed sinc's %.3f", ripple, sincRipple)
	}
	if stop < 80 || stop < sincStop {
		t.Errorf("stopband %.2f dB, want at least 80 and the windowed sinc's %.2f", stop, sincStop)
	}
	if len(taps) >= len(sinc.rows)-1 {
		t.Errorf("%d taps, no fewer than the windowed sinc's %d", len(taps), len(sinc.rows)-1)
	}
}

// Through Process, as a TTS stream runs it, at each ratio the filter
// serves: tones in the passband (to 0.425 of the output rate) come out at
// their level, tones the output rate cannot carry are gone.
func TestDecimator3Tones(t *testing.T) {
	for _, rates := range [][2]int{{24000, 8000}, {48000, 16000}, {24000, 16000}} {
		from, to := rates[0], rates[1]
		for _, frac := range []float64{0.04, 0.125, 0.25, 0.375, 0.425, 0.5, 0.52, 0.6, 0.7, 1, 1.3} {
			hz := frac * float64(to)
			if hz >= 0.48*float64(from) {
				continue
			}
			tone := Tone(hz, from, time.Second, 0.9)
			out := steady(resampleAll(from, to, tone, media20ms(from)), to)
			gain := 20 * math.Log10(RMS(out)/RMS(steady(tone, from)))
			switch {
			case frac <= 0.425 && math.Abs(gain) > 0.3:
				t.Errorf("%d->%d: %g Hz passes at %.2f dB, want within 0.3 dB", from, to, hz, gain)
			case frac >= 0.5 && gain > -80:
				t.Errorf("%d->%d: %g Hz leaks through at %.1f dB, want -80 or less", from, to, hz, gain)
			}
		}
	}
}

// 2:3 runs the decimator's filter as two phases.
func TestTwoThirdsUsesDecimatorFilter(t *testing.T) {
	if r := NewResampler(24000, 16000); r.m != 3 || r.l != 2 || 2*r.h != dec3Half+1 {
		t.Fatalf("24000 -> 16000: %d/%d with %d taps, not the decimator's filter", r.l, r.m, 2*r.h)
	}
}
