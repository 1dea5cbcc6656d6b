package audio

import "math"

// Biquad is one second-order filter section, transposed direct form II.
// Run a sample through with Step; chain sections by nesting the calls,
// which the compiler inlines into per-sample loops.
type Biquad struct{ b0, b1, b2, a1, a2, z1, z2 float64 }

// flushBelow is the size of the memory under which it is set to exact zero.
//
// On digital silence (G.711 0xFF decodes to exact zeros) the recursion
// decays geometrically into the subnormal range (below 2⁻¹⁰²² ≈ 2.2e-308)
// and, its rounding keeping it alive there, stays: every multiply then
// takes the CPU's slow path, and a silent 20 ms frame through the VAD cost
// 42 µs instead of 1.3 on the machine the issue was measured on. Flushing
// is chosen over adding a tiny offset or alternating constant to the input
// because it leaves the output bit-identical whenever the memory is above
// the threshold, which speech, noise or any signal a caller sends always
// keeps it (samples come in int16 or ±1 units, 30 orders of magnitude up),
// so no result anywhere changes, and because once flushed the memory is
// exactly zero and stays so, so silence costs what speech does and the
// detectors see exact silence. Both words are flushed together, on their
// sum: flushing one alone as it swings through zero would kick the ringing
// section and keep it ringing near the threshold forever.
const flushBelow = 1e-30

// Step filters one sample.
func (f *Biquad) Step(x float64) float64 {
	y := f.b0*x + f.z1
	z1 := f.b1*x - f.a1*y + f.z2
	z2 := f.b2*x - f.a2*y
	if math.Abs(z1)+math.Abs(z2) < flushBelow {
		z1, z2 = 0, 0
	}
	f.z1, f.z2 = z1, z2
	return y
}

// Reset clears the section's memory, as if no sample had gone through.
func (f *Biquad) Reset() { f.z1, f.z2 = 0, 0 }

// Finite reports whether the section's memory holds only finite values
// (not after an overflow or a NaN fed in).
func (f *Biquad) Finite() bool {
	return !math.IsInf(f.z1, 0) && !math.IsNaN(f.z1) && !math.IsInf(f.z2, 0) && !math.IsNaN(f.z2)
}

// HighPass4 is a fourth-order Butterworth high-pass at fc Hz for samples
// at rate Hz: two sections (RBJ cookbook, the Butterworth Q values) to run
// in order, hp[1].Step(hp[0].Step(x)).
func HighPass4(fc float64, rate int) [2]Biquad {
	return [2]Biquad{highPass(fc, 0.5411961, rate), highPass(fc, 1.3065630, rate)}
}

// highPass is a second-order high-pass section at fc with quality q.
func highPass(fc, q float64, rate int) Biquad {
	w := 2 * math.Pi * fc / float64(rate)
	alpha := math.Sin(w) / (2 * q)
	cw := math.Cos(w)
	a0 := 1 + alpha
	return Biquad{
		b0: (1 + cw) / 2 / a0, b1: -(1 + cw) / a0, b2: (1 + cw) / 2 / a0,
		a1: -2 * cw / a0, a2: (1 - alpha) / a0,
	}
}
