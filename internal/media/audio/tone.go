package audio

import (
	"math"
	"time"
)

const fullScale = 32768.0

// detectMinRMS is -50 dBFS: below it a block counts as silence, whatever
// its spectrum looks like.
var detectMinRMS = math.Pow(10, -50.0/20)

// detectMinShare is the ToneShare DetectTone asks for. A clean tone gives
// about 1. A tone in broadband noise of equal power (0 dB SNR) gives 0.5 on
// average, scattering around it from block to block, so the bar sits below
// 0.5: the tone must carry at least 40% of the energy (SNR above -1.8 dB).
// That also detects each of two equal tones, as in a DTMF digit.
const detectMinShare = 0.4

// samples is how many samples d lasts at rate, rounding down.
func samples(rate int, d time.Duration) int {
	if rate <= 0 || d <= 0 {
		return 0
	}
	return int(int64(d/time.Second)*int64(rate) + int64(d%time.Second)*int64(rate)/int64(time.Second))
}

// Tone returns d of a sine at freq Hz sampled at rate, with peak amplitude
// given as a fraction of full scale (clamped to 0..1). It starts at phase 0
// and is not faded, so it suits tests and detectors rather than callers' ears.
func Tone(freq float64, rate int, d time.Duration, amplitude float64) []int16 {
	out := make([]int16, samples(rate, d))
	a := math.Max(0, math.Min(1, amplitude)) * math.MaxInt16
	w := 2 * math.Pi * freq / float64(rate)
	for i := range out {
		out[i] = int16(math.Round(a * math.Sin(w*float64(i))))
	}
	return out
}

// Silence returns d of digital silence at rate.
func Silence(rate int, d time.Duration) []int16 {
	return make([]int16, samples(rate, d))
}

// RMS is the root mean square of pcm as a fraction of full scale: a
// full-scale sine gives about 0.707, silence 0.
func RMS(pcm []int16) float64 {
	if len(pcm) == 0 {
		return 0
	}
	return math.Sqrt(energy(pcm)/float64(len(pcm))) / fullScale
}

func energy(pcm []int16) float64 {
	var e float64
	for _, x := range pcm {
		e += float64(x) * float64(x)
	}
	return e
}

// ToneShare is the share (0..1) of pcm's energy at freq, measured with the
// Goertzel algorithm: the block's spectrum evaluated at exactly freq,
// normalised (by Parseval) so a pure tone at freq gives about 1, a tone at
// another frequency about 0 and silence 0. Its resolution is about rate/len
// Hz: a 20 ms block tells apart tones some 50 Hz or more apart, a longer block
// finer ones.
func ToneShare(pcm []int16, rate int, freq float64) float64 {
	n := float64(len(pcm))
	nyquist := float64(rate) / 2
	if len(pcm) == 0 || rate <= 0 || freq < 0 || freq > nyquist {
		return 0
	}
	e := energy(pcm)
	if e == 0 {
		return 0
	}
	coeff := 2 * math.Cos(2*math.Pi*freq/float64(rate))
	var s1, s2 float64
	for _, x := range pcm {
		s1, s2 = float64(x)+coeff*s1-s2, s1
	}
	power := s1*s1 + s2*s2 - coeff*s1*s2 // |X(freq)|²
	// A real tone's energy is split between +freq and -freq; only DC and
	// Nyquist have a single bin.
	share := power / (n * e)
	if freq > 0 && freq < nyquist {
		share *= 2
	}
	return math.Max(0, math.Min(1, share))
}

// DetectTone reports whether freq dominates pcm: the block is not near
// silent (RMS above -50 dBFS) and at least 40% of its energy is at freq
// (ToneShare ≥ 0.4; see detectMinShare for why not 0.5). In noise, longer
// blocks (100 ms or more) give steadier answers than single 20 ms frames.
func DetectTone(pcm []int16, rate int, freq float64) bool {
	return RMS(pcm) > detectMinRMS && ToneShare(pcm, rate, freq) >= detectMinShare
}
