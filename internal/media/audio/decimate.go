package audio

import (
	"math"
	"slices"
	"sync"
)

// Exact 3:1 decimation (24 kHz TTS voices to an 8 kHz line, 48 kHz WebRTC
// audio to 16 kHz) runs for every frame a voice like OpenAI's speaks, so
// it gets its own filter: an equiripple low-pass of 127 taps
// (remezLowPass) instead of the windowed sinc's 191, meeting the same
// figures relative to the lower rate (passband 0–0.425 of it, 3.4 kHz at
// 8 kHz, flat within 0.26 dB; 83 dB down from its Nyquist frequency,
// 4 kHz, up), applied folded (each pair of equal taps takes one multiply)
// and only for the outputs kept: half the windowed sinc's arithmetic per
// output. 2:3 (24 kHz voices to a 16 kHz G.722 line) runs the same filter
// as two polyphase phases. decimate_test.go checks the figures against the
// windowed sinc's; bench_test.go times both (the Sinc benchmarks).
const (
	dec3Half = 63 // taps either side of the centre; a multiple of 3, so the delay is 21 whole output samples
	// dec3Pass and dec3Stop are the band edges in cycles per input sample:
	// 0.425 and 0.5 of the output rate.
	dec3Pass = 0.425 / 3
	dec3Stop = 0.5 / 3
	// dec3StopWeight trades the passband ripple (0.26 dB) for the stopband
	// (83.3 dB) at this length: both a little better than the windowed sinc.
	dec3StopWeight = 225
)

// dec3Filter is the filter, designed once per process.
var dec3Filter = sync.OnceValue(func() []float64 {
	return remezLowPass(dec3Half, dec3Pass, dec3Stop, dec3StopWeight)
})

// dec3Taps is the first half of the symmetric filter and its centre tap.
var dec3Taps = sync.OnceValue(func() *[dec3Half + 1]float32 {
	var taps [dec3Half + 1]float32
	for i := range taps {
		taps[i] = float32(dec3Filter()[i])
	}
	return &taps
})

// newTwoThirdsResampler converts by 2:3 (24 kHz TTS voices to a 16 kHz
// G.722 line) with the same filter: upsampled by 2 the input is at three
// times the output rate, where the filter's band edges sit, so its even and
// odd taps are the two phases of a polyphase Resampler, 64 taps an output
// against the windowed sinc's 96.
func newTwoThirdsResampler() *Resampler {
	const h = (dec3Half + 1) / 2 // taps either side, in input samples
	r := &Resampler{l: 2, m: 3, h: h, rows: make([]float32, 2*2*h)}
	proto := dec3Filter()
	for p := range 2 {
		row := r.rows[p*2*h : (p+1)*2*h]
		var sum float64
		for j := range row {
			// The tap at p/2 - (j-h+1) input samples from the centre.
			if i := dec3Half + p - 2*(j-h+1); i >= 0 && i < len(proto) {
				sum += proto[i]
			}
		}
		for j := range row {
			if i := dec3Half + p - 2*(j-h+1); i >= 0 && i < len(proto) {
				row[j] = float32(proto[i] / sum) // unit gain at DC for each phase
			}
		}
	}
	r.buf = make([]float32, 2*h-1, 4*h)
	return r
}

// decimate3 is Process for an exact 3:1 ratio: one output for every third
// input, from the 2·dec3Half+1 inputs around it.
func (r *Resampler) decimate3(dst, src []int16) []int16 {
	have := len(r.buf)
	r.buf = slices.Grow(r.buf, len(src))[:have+len(src)]
	for i, x := range src {
		r.buf[have+i] = float32(x)
	}
	const n = 2*dec3Half + 1
	dst = slices.Grow(dst, (len(r.buf)-r.pos)/3)
	for r.pos+n <= len(r.buf) {
		dst = append(dst, round16(dotSymmetric(r.sym, (*[n]float32)(r.buf[r.pos:r.pos+n]))))
		r.pos += 3
	}
	r.dropHistory()
	return dst
}

// round16 is clamp16 rounding ties to even, which the CPU does in one
// instruction where math.Round's ties away from zero take a dozen (a fifth
// of the decimator's time); the two differ only on exact halves.
func round16(x float32) int16 { return int16(math.RoundToEven(float64(clampInt16(x)))) }

// dotSymmetric is the dot product of x with the symmetric filter whose
// first half and centre are half: the two samples a pair of equal taps
// weighs are added before the one multiply. Fixed sizes let the compiler
// drop every bounds check.
func dotSymmetric(half *[dec3Half + 1]float32, x *[2*dec3Half + 1]float32) float32 {
	const k = dec3Half
	var s0, s1, s2, s3 float32
	i := 0
	for ; i <= k-4; i += 4 {
		s0 += half[i] * (x[i] + x[2*k-i])
		s1 += half[i+1] * (x[i+1] + x[2*k-i-1])
		s2 += half[i+2] * (x[i+2] + x[2*k-i-2])
		s3 += half[i+3] * (x[i+3] + x[2*k-i-3])
	}
	for ; i < k; i++ {
		s0 += half[i] * (x[i] + x[2*k-i])
	}
	s1 += half[k] * x[k]
	return (s0 + s1) + (s2 + s3)
}
