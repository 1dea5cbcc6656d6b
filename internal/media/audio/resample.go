package audio

import (
	"fmt"
	"math"
	"slices"
)

// Filter design, relative to the lower of the two rates: the low-pass is
// 6 dB down at 0.45 of it (3.6 kHz at 8 kHz) and some 80 dB down by its
// Nyquist frequency (4 kHz), so nearly nothing aliases; the passband is flat
// to within 0.3 dB up to 0.42 of it (3.4 kHz at 8 kHz). That takes 32 of its
// periods either side of the centre under a Kaiser window of β 8, which is
// also the delay: 4 ms at 8 kHz.
const (
	resampleCutoff    = 0.45
	resampleHalfWidth = 32
	resampleBeta      = 8.0
	// Polyphase tables up to this many coefficients are precomputed per
	// phase; odder rate pairs (say 47999 to 48000) read a finely sampled
	// kernel instead.
	resampleMaxTable = 1 << 16
	// Fine-table kernel samples per zero crossing of the sinc; linear
	// interpolation between them is accurate to about -95 dB.
	resampleFineRes = 256
)

// Resampler converts a stream of mono PCM from one sample rate to another.
//
// The method is band-limited interpolation with a Kaiser-windowed sinc
// (polyphase FIR): every output sample is a weighted sum of the input
// samples around its instant, with a low-pass that keeps everything below
// about 0.41 of the lower rate and suppresses images and aliases by about
// 80 dB, so downsampling does not fold high frequencies into the phone band
// and upsampling does not add imaging hiss. For a rate ratio that reduces to
// to/from = L/M the filter has L phases; they are precomputed unless the
// table would be large (unusual rate pairs), where a finely sampled kernel
// is interpolated instead. Exact 3:1 and 2:3 conversions (24 kHz TTS to an
// 8 or 16 kHz line, 48 to 16 kHz) use a shorter equiripple filter of the
// same figures instead (decimate.go), delayed 21 periods of the lower rate
// at 3:1 (2.6 ms at 8 kHz) and 32 of the higher at 2:3 (1.3 ms).
//
// The Resampler keeps the filter's history between calls, so a stream cut
// into frames resamples exactly as if it came in one block, with no clicks at
// frame edges. The output is the input delayed by the filter's half-length
// (32 periods of the lower rate: 4 ms at 8 kHz, 0.7 ms at 48 kHz), which is
// what lets each call return output at once: after N input samples in total
// it has produced exactly ceil(N·to/from) output samples, so a 20 ms frame
// in gives a 20 ms frame out and a long stream never drifts.
//
// from == to copies. A Resampler is not safe for concurrent use.
type Resampler struct {
	l, m      int       // to/from reduced: output step is m/l input samples
	h         int       // taps either side of the output instant
	rows      []float32 // l phases of 2h coefficients, or nil
	fine      []float32 // kernel at |τ| = i/fineScale, when rows is nil
	fineScale float64
	row       []float32 // scratch for one phase computed from fine
	buf       []float32 // input history; buf[pos] is the first tap of the next output
	pos       int
	phase     int                    // the next output's instant is pos+h-1 + phase/l
	sym       *[dec3Half + 1]float32 // exact 3:1: the decimator's half filter (decimate.go), or nil
	bypass    bool
}

// NewResampler returns a Resampler from one positive rate (Hz) to another.
// It panics if either rate is not positive.
func NewResampler(from, to int) *Resampler {
	if from <= 0 || to <= 0 {
		panic(fmt.Sprintf("audio: NewResampler(%d, %d): rates must be positive", from, to))
	}
	if from == to {
		return &Resampler{bypass: true}
	}
	if from == 3*to {
		// The first output's window ends at the first input; the delay is
		// dec3Half inputs.
		return &Resampler{l: 1, m: 3, sym: dec3Taps(), buf: make([]float32, 2*dec3Half, 4*dec3Half)}
	}
	if 3*to == 2*from {
		return newTwoThirdsResampler()
	}
	return newSincResampler(from, to)
}

// newSincResampler is a Resampler by the windowed sinc, for any two rates.
func newSincResampler(from, to int) *Resampler {
	g := gcd(from, to)
	r := &Resampler{l: to / g, m: from / g}

	// Work in input samples: c is the cutoff as a fraction of the input
	// Nyquist, w the window half-width.
	low := min(from, to)
	c := 2 * resampleCutoff * float64(low) / float64(from)
	w := resampleHalfWidth * float64(from) / float64(low)
	r.h = int(math.Ceil(w))
	taps := 2 * r.h
	i0b := besselI0(resampleBeta)
	kernel := func(t float64) float64 {
		u := t / w
		if u <= -1 || u >= 1 {
			return 0
		}
		return c * sinc(c*t) * besselI0(resampleBeta*math.Sqrt(1-u*u)) / i0b
	}

	if int64(r.l)*int64(taps) <= resampleMaxTable {
		r.rows = make([]float32, r.l*taps)
		k := make([]float64, taps)
		for p := range r.l {
			row := r.rows[p*taps : (p+1)*taps]
			frac := float64(p) / float64(r.l)
			var sum float64
			for j := range taps {
				k[j] = kernel(frac - float64(j-r.h+1))
				sum += k[j]
			}
			// Unit gain at DC for every phase, so no ripple at the phase rate.
			for j := range taps {
				row[j] = float32(k[j] / sum)
			}
		}
	} else {
		r.fineScale = c * resampleFineRes
		r.fine = make([]float32, int(math.Ceil(w*r.fineScale))+2)
		for i := range r.fine {
			r.fine[i] = float32(kernel(float64(i) / r.fineScale))
		}
		r.row = make([]float32, taps)
	}
	// The first output's window reaches h-1 samples before the first input,
	// and the delay of h samples puts h more silent samples ahead of it.
	r.buf = make([]float32, 2*r.h-1, 4*r.h)
	return r
}

// Process resamples src, appends the result to dst and returns it.
func (r *Resampler) Process(dst, src []int16) []int16 {
	if r.bypass {
		return append(dst, src...)
	}
	if r.sym != nil {
		return r.decimate3(dst, src)
	}
	for _, x := range src {
		r.buf = append(r.buf, float32(x))
	}
	taps := 2 * r.h
	dst = slices.Grow(dst, len(src)*r.l/r.m+1)
	for r.pos+taps <= len(r.buf) {
		acc := dot(r.coefficients(r.phase), r.buf[r.pos:r.pos+taps])
		dst = append(dst, clamp16(acc))
		r.phase += r.m
		r.pos += r.phase / r.l
		r.phase %= r.l
	}
	r.dropHistory()
	return dst
}

// dropHistory drops the input no later output needs.
func (r *Resampler) dropHistory() {
	if r.pos >= len(r.buf) {
		r.pos -= len(r.buf)
		r.buf = r.buf[:0]
	} else {
		r.buf = r.buf[:copy(r.buf, r.buf[r.pos:])]
		r.pos = 0
	}
}

// coefficients returns the 2h taps for an output phase/l of a sample after
// the centre tap.
func (r *Resampler) coefficients(phase int) []float32 {
	taps := 2 * r.h
	if r.rows != nil {
		return r.rows[phase*taps : (phase+1)*taps]
	}
	frac := float64(phase) / float64(r.l)
	for j := range r.row {
		x := math.Abs(frac-float64(j-r.h+1)) * r.fineScale
		i := int(x)
		if i+1 >= len(r.fine) {
			r.row[j] = 0
			continue
		}
		f := float32(x - float64(i))
		r.row[j] = r.fine[i] + f*(r.fine[i+1]-r.fine[i])
	}
	return r.row
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func clamp16(x float32) int16 { return int16(math.Round(float64(clampInt16(x)))) }

// clampInt16 is x held to int16's range.
func clampInt16(x float32) float32 { return min(max(x, math.MinInt16), math.MaxInt16) }

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the modified Bessel function of the first kind, order 0, by
// its power series (converges quickly for the β used here).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; term > 1e-12*sum; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
