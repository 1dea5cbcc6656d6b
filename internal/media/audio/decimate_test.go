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

// Through Process, as a TTS stream runs it: tones in the passband come out
// at their level, tones the line cannot carry are gone, and the output is
// the windowed sinc's to within the two filters' small differences.
func TestDecimator3Tones(t *testing.T) {
	for _, rates := range [][2]int{{24000, 8000}, {48000, 16000}} {
		from, to := rates[0], rates[1]
		scale := float64(to) / 8000
		for _, hz := range []float64{300, 1000, 2000, 3000, 3400, 4000, 4300, 6000, 11000} {
			hz *= scale
			tone := Tone(hz, from, time.Second, 0.9)
			out := steady(resampleAll(from, to, tone, media20ms(from)), to)
			gain := 20 * math.Log10(RMS(out)/RMS(steady(tone, from)))
			switch {
			case hz < 0.43*float64(to) && math.Abs(gain) > 0.3:
				t.Errorf("%d->%d: %g Hz passes at %.2f dB, want within 0.3 dB", from, to, hz, gain)
			case hz >= 0.5*float64(to) && gain > -80:
				t.Errorf("%d->%d: %g Hz leaks through at %.1f dB, want -80 or less", from, to, hz, gain)
			}
		}
	}
}
