package vad

import (
	"math"
	"math/rand/v2"
	"time"
)

// Synthetic signals for the tests: nothing here is recorded speech.

// resonator is a 2-pole IIR formant resonator with unity gain at DC.
type resonator struct{ a1, a2, g, y1, y2 float64 }

func newResonator(freq, bw float64, rate int) resonator {
	r := math.Exp(-math.Pi * bw / float64(rate))
	a1 := -2 * r * math.Cos(2*math.Pi*freq/float64(rate))
	a2 := r * r
	return resonator{a1: a1, a2: a2, g: 1 + a1 + a2}
}

func (r *resonator) step(x float64) float64 {
	y := r.g*x - r.a1*r.y1 - r.a2*r.y2
	r.y2, r.y1 = r.y1, y
	return y
}

// speechLike returns d of a voiced-speech imitation at rate: a glottal
// pulse train around 120 Hz with 3% pitch jitter and slow intonation,
// through three formant resonators whose frequencies drift (vowel changes),
// under a 4 Hz syllable envelope, scaled to the given RMS (fraction of full
// scale) over its whole length.
func speechLike(rate int, d time.Duration, rms float64, seed uint64) []int16 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := int(int64(d) * int64(rate) / int64(time.Second))
	out := make([]float64, n)
	f1 := newResonator(700, 130, rate)
	f2 := newResonator(1220, 70, rate)
	f3 := newResonator(2600, 160, rate)
	phase := 0.0
	var prevPulse float64
	for i := range out {
		t := float64(i) / float64(rate)
		f0 := 120 * (1 + 0.1*math.Sin(2*math.Pi*0.7*t))
		phase += f0 / float64(rate)
		pulse := 0.0
		if phase >= 1 {
			phase -= 1 + 0.03*(rng.Float64()-0.5)
			pulse = 1
		}
		// Differentiated glottal pulse plus a little aspiration noise.
		exc := pulse - prevPulse + 0.02*rng.NormFloat64()
		prevPulse = pulse * 0.9
		if i%(rate/50) == 0 { // retune formants every 20 ms: the vowel moves
			v := math.Sin(2 * math.Pi * 1.3 * t)
			f1 = retune(f1, 500+250*v, 130, rate)
			f2 = retune(f2, 1500-400*v, 90, rate)
			f3 = retune(f3, 2500+150*v, 160, rate)
		}
		y := 0.6*f1.step(exc) + 0.3*f2.step(exc) + 0.1*f3.step(exc)
		// Syllables at 4 Hz: voiced for most of each 250 ms, a dip between.
		env := math.Pow(math.Abs(math.Sin(math.Pi*4*t)), 0.6)
		if t < 0.01 {
			env *= t / 0.01
		}
		out[i] = y * env
	}
	return scale(out, rms)
}

func retune(r resonator, freq, bw float64, rate int) resonator {
	nr := newResonator(freq, bw, rate)
	nr.y1, nr.y2 = r.y1, r.y2
	return nr
}

// whiteNoise returns d of Gaussian white noise at the given RMS.
func whiteNoise(rate int, d time.Duration, rms float64, seed uint64) []int16 {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := int(int64(d) * int64(rate) / int64(time.Second))
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return scale(out, rms)
}

// pinkNoise returns d of 1/f noise (Paul Kellet's filter) at the given RMS.
func pinkNoise(rate int, d time.Duration, rms float64, seed uint64) []int16 {
	rng := rand.New(rand.NewPCG(seed, 2))
	n := int(int64(d) * int64(rate) / int64(time.Second))
	out := make([]float64, n)
	var b0, b1, b2, b3, b4, b5, b6 float64
	for i := range out {
		w := rng.NormFloat64()
		b0 = 0.99886*b0 + w*0.0555179
		b1 = 0.99332*b1 + w*0.0750759
		b2 = 0.96900*b2 + w*0.1538520
		b3 = 0.86650*b3 + w*0.3104856
		b4 = 0.55000*b4 + w*0.5329522
		b5 = -0.7616*b5 - w*0.0168980
		out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w*0.5362
		b6 = w * 0.115926
	}
	return scale(out, rms)
}

func scale(x []float64, rms float64) []int16 {
	var e float64
	for _, v := range x {
		e += v * v
	}
	k := 0.0
	if e > 0 {
		k = rms * 32767 / math.Sqrt(e/float64(len(x)))
	}
	out := make([]int16, len(x))
	for i, v := range x {
		out[i] = clip(v * k)
	}
	return out
}

func clip(v float64) int16 {
	return int16(math.Max(math.MinInt16, math.Min(math.MaxInt16, math.Round(v))))
}

// mix adds b into a (same rate) starting at sample offset off, clipping.
func mix(a, b []int16, off int) []int16 {
	out := append([]int16(nil), a...)
	for i, v := range b {
		if off+i < len(out) {
			out[off+i] = clip(float64(out[off+i]) + float64(v))
		}
	}
	return out
}

func concat(parts ...[]int16) []int16 {
	var out []int16
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// dbRMS is an RMS (fraction of full scale) db decibels below rms.
func dbBelow(rms, db float64) float64 { return rms * math.Pow(10, -db/20) }
