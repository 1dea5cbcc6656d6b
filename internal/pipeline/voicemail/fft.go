package voicemail

import "math"

// spectrum is the power spectrum of a real block of n (a power of two)
// samples, computed as a complex FFT of n/2 points on the even and odd
// samples packed together, then split. Everything it needs is allocated by
// newSpectrum, so power does not allocate.
type spectrum struct {
	n      int
	re, im []float64 // n/2 working points
	cos    []float64 // twiddles of the n/2-point FFT: e^{-2πij/(n/2)}, j < n/4
	sin    []float64
	pcos   []float64 // split twiddles: e^{-2πik/n}, k ≤ n/2
	psin   []float64
	rev    []int32 // bit reversal of n/2 points
	pow    []float64
}

func newSpectrum(n int) *spectrum {
	m := n / 2
	s := &spectrum{
		n: n, re: make([]float64, m), im: make([]float64, m),
		cos: make([]float64, m/2), sin: make([]float64, m/2),
		pcos: make([]float64, m+1), psin: make([]float64, m+1),
		rev: make([]int32, m), pow: make([]float64, m+1),
	}
	for j := range s.cos {
		a := -2 * math.Pi * float64(j) / float64(m)
		s.cos[j], s.sin[j] = math.Cos(a), math.Sin(a)
	}
	for k := range s.pcos {
		a := -2 * math.Pi * float64(k) / float64(n)
		s.pcos[k], s.psin[k] = math.Cos(a), math.Sin(a)
	}
	bits := 0
	for 1<<bits < m {
		bits++
	}
	for i := range s.rev {
		r := 0
		for b := 0; b < bits; b++ {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		s.rev[i] = int32(r)
	}
	return s
}

// power fills and returns s.pow[k] = |X[k]|² for k = 0..n/2, where X is
// the DFT of x zero-padded to n samples (len(x) ≤ n).
func (s *spectrum) power(x []float64) []float64 {
	m := s.n / 2
	for i := range m {
		var a, b float64
		if 2*i < len(x) {
			a = x[2*i]
		}
		if 2*i+1 < len(x) {
			b = x[2*i+1]
		}
		r := s.rev[i]
		s.re[r], s.im[r] = a, b
	}
	// Iterative radix-2 decimation in time.
	for size := 2; size <= m; size <<= 1 {
		half := size / 2
		step := m / size
		for start := 0; start < m; start += size {
			for j := range half {
				wr, wi := s.cos[j*step], s.sin[j*step]
				p, q := start+j, start+j+half
				tr := wr*s.re[q] - wi*s.im[q]
				ti := wr*s.im[q] + wi*s.re[q]
				s.re[q], s.im[q] = s.re[p]-tr, s.im[p]-ti
				s.re[p] += tr
				s.im[p] += ti
			}
		}
	}
	// Split: X[k] = E[k] + e^{-2πik/n}·O[k], where E and O are the DFTs of
	// the even and odd samples: E = (Z[k] + Z*[m-k])/2, O = (Z[k] - Z*[m-k])/2i.
	mask := m - 1 // m is a power of two: & mask is % m without a division
	for k := 0; k <= m; k++ {
		zr, zi := s.re[k&mask], s.im[k&mask]
		cr, ci := s.re[(m-k)&mask], -s.im[(m-k)&mask]
		er, ei := (zr+cr)/2, (zi+ci)/2
		// (Z - C)/2i = -i(Z - C)/2
		or, oi := (zi-ci)/2, -(zr-cr)/2
		wr, wi := s.pcos[k], s.psin[k]
		xr := er + wr*or - wi*oi
		xi := ei + wr*oi + wi*or
		s.pow[k] = xr*xr + xi*xi
	}
	return s.pow
}
