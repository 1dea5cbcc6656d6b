package audio

import (
	"math"
	"slices"
)

// remezLowPass designs a linear-phase low-pass FIR of 2k+1 taps by the
// Parks–McClellan (Remez exchange) method: the taps whose amplitude
// response is 1 ± δ up to pass and 0 ± δ/stopWeight from stop to the
// Nyquist frequency (both in cycles per sample, 0 < pass < stop < 0.5),
// with the largest weighted error δ as small as the exchange gets it for
// that length. Against a windowed sinc, which ripples as much in the
// passband as in the stopband, it spends the taps where the specification
// is tight (the stopband) and lets the passband ripple up to what is
// allowed, so the same figures take fewer taps. The result is symmetric
// and sums to 1 (unit gain at DC).
//
// The exchange is the textbook one and not hardened for every
// specification (with the extremal set crowding a band edge it can stall,
// and the best response met is returned): it is run for the one filter
// decimate.go fixes, whose figures decimate_test.go checks. It takes a few
// milliseconds, once per process.
func remezLowPass(k int, pass, stop, stopWeight float64) []float64 {
	r := k + 1 // cosine terms: A(ω) = Σ a_j cos(jω), j = 0..k
	// The dense grid, with points on the band edges.
	const density = 16
	n := density * r
	var grid, want, weight []float64
	passPts := max(int(math.Round(float64(n)*pass/(pass+0.5-stop))), r)
	for i := range passPts + 1 {
		grid = append(grid, 2*math.Pi*pass*float64(i)/float64(passPts))
		want, weight = append(want, 1), append(weight, 1)
	}
	stopPts := max(n-passPts, r)
	for i := range stopPts + 1 {
		grid = append(grid, 2*math.Pi*(stop+(0.5-stop)*float64(i)/float64(stopPts)))
		want, weight = append(want, 0), append(weight, stopWeight)
	}
	x := make([]float64, len(grid))
	for i, w := range grid {
		x[i] = math.Cos(w)
	}

	// Start from r+1 extremal frequencies spread over the grid.
	ext := make([]int, r+1)
	for i := range ext {
		ext[i] = i * (len(grid) - 1) / r
	}
	var amp, best func(xv float64) float64
	bestErr := math.Inf(1)
	err := make([]float64, len(grid))
	for range 100 {
		// δ from the r+1 alternation conditions, then A through r of them
		// by barycentric interpolation.
		bary := func(m int) []float64 {
			b := make([]float64, m)
			for i := range m {
				p := 1.0
				for j := range m {
					if j != i {
						p *= 2 * (x[ext[i]] - x[ext[j]]) // ×2 keeps the product in range
					}
				}
				b[i] = 1 / p
			}
			return b
		}
		b := bary(r + 1)
		var num, den float64
		sign := 1.0
		for i, e := range ext {
			num += b[i] * want[e]
			den += sign * b[i] / weight[e]
			sign = -sign
		}
		delta := num / den
		d := bary(r)
		xs, cs := make([]float64, r), make([]float64, r)
		sign = 1
		for i := range r {
			xs[i] = x[ext[i]]
			cs[i] = want[ext[i]] - sign*delta/weight[ext[i]]
			sign = -sign
		}
		amp = func(xv float64) float64 {
			var nu, de float64
			for i, xi := range xs {
				if xv == xi {
					return cs[i]
				}
				t := d[i] / (xv - xi)
				nu += t * cs[i]
				de += t
			}
			return nu / de
		}
		worst := 0.0
		for i := range grid {
			err[i] = weight[i] * (want[i] - amp(x[i]))
			worst = max(worst, math.Abs(err[i]))
		}
		// Keep the best response met; the exchange can wander once the
		// extremal set crowds a band edge.
		if worst < bestErr {
			best, bestErr = amp, worst
		}
		if worst-math.Abs(delta) <= 1e-6*math.Abs(delta) {
			break
		}

		// The new extremal set: local extrema of the error at least |δ|,
		// alternating in sign, cut to r+1 by dropping the smaller end.
		var cand []int
		for i := range grid {
			e := math.Abs(err[i])
			if e < math.Abs(delta)*(1-1e-9) {
				continue
			}
			// A peak of the signed error: a neighbour of the other sign
			// does not hide a peak of one grid point (as at a band edge).
			s := math.Copysign(1, err[i])
			left := i == 0 || i == passPts+1 || e >= s*err[i-1]
			right := i == len(grid)-1 || i == passPts || e >= s*err[i+1]
			if left && right {
				cand = append(cand, i)
			}
		}
		var alt []int
		for _, i := range cand {
			if len(alt) > 0 && math.Signbit(err[alt[len(alt)-1]]) == math.Signbit(err[i]) {
				if math.Abs(err[i]) > math.Abs(err[alt[len(alt)-1]]) {
					alt[len(alt)-1] = i
				}
				continue
			}
			alt = append(alt, i)
		}
		for len(alt) > r+1 {
			if math.Abs(err[alt[0]]) < math.Abs(err[alt[len(alt)-1]]) {
				alt = alt[1:]
			} else {
				alt = alt[:len(alt)-1]
			}
		}
		if len(alt) < r+1 || slices.Equal(alt, ext) {
			break
		}
		ext = alt
	}

	// Taps from the amplitude response at N equally spaced frequencies
	// (an inverse DFT of a real, even spectrum).
	taps := 2*k + 1
	a := make([]float64, r)
	for j := range r {
		a[j] = best(math.Cos(2 * math.Pi * float64(j) / float64(taps)))
	}
	h := make([]float64, taps)
	var sum float64
	for m := 0; m <= k; m++ {
		v := a[0]
		for j := 1; j < r; j++ {
			v += 2 * a[j] * math.Cos(2*math.Pi*float64(j*m)/float64(taps))
		}
		h[k+m], h[k-m] = v/float64(taps), v/float64(taps)
	}
	for _, v := range h {
		sum += v
	}
	for i := range h {
		h[i] /= sum
	}
	return h
}
