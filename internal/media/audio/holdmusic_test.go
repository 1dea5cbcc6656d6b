package audio

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestHoldMusic(t *testing.T) {
	for _, rate := range []int{8000, 16000, 24000, 48000} {
		m := HoldMusic(rate, 10*time.Second+7*time.Millisecond)
		if want := samples(rate, 10*time.Second+7*time.Millisecond); len(m) != want {
			t.Fatalf("%d Hz: %d samples, want %d", rate, len(m), want)
		}
		// Soft: audible but well below full scale, never clipping.
		if rms := RMS(m); rms < 0.02 || rms > 0.2 {
			t.Errorf("%d Hz: RMS %.3f, want a gentle level", rate, rms)
		}
		peak := slices.Max(m)
		if float64(peak) > 0.5*math.MaxInt16 {
			t.Errorf("%d Hz: peak %d", rate, peak)
		}
		// Starts and ends at silence, so looping the buffer does not click.
		if abs(m[0]) > 10 || abs(m[len(m)-1]) > 10 {
			t.Errorf("%d Hz: edges %d and %d are not silent", rate, m[0], m[len(m)-1])
		}
		// No jump between neighbouring samples larger than the steepest
		// note itself can make (a click would be a near full-scale step).
		maxStep := 2 * math.Pi * 523.25 / float64(rate) * 2 * holdLevel * math.MaxInt16 * 1.1
		for i := 1; i < len(m); i++ {
			if d := math.Abs(float64(m[i]) - float64(m[i-1])); d > maxStep {
				t.Fatalf("%d Hz: step of %v at sample %d", rate, d, i)
			}
		}
	}
	if len(HoldMusic(8000, 0)) != 0 {
		t.Error("zero duration must give no samples")
	}
}

func TestHoldMusicIsDeterministic(t *testing.T) {
	a, b := HoldMusic(8000, 3*time.Second), HoldMusic(8000, 3*time.Second)
	if !slices.Equal(a, b) {
		t.Error("two calls differ")
	}
}

func abs(x int16) int {
	if x < 0 {
		return -int(x)
	}
	return int(x)
}
