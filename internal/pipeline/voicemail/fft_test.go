package voicemail

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// The packed real FFT agrees with a direct DFT.
func TestSpectrumMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{8, 64, 256, 512} {
		s := newSpectrum(n)
		x := make([]float64, n*5/8)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		got := s.power(x)
		for k := 0; k <= n/2; k++ {
			var sum complex128
			for i, v := range x {
				sum += complex(v, 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*i)/float64(n)))
			}
			want := real(sum)*real(sum) + imag(sum)*imag(sum)
			if math.Abs(got[k]-want) > 1e-9*(1+want) {
				t.Fatalf("n=%d k=%d: power %g, DFT %g", n, k, got[k], want)
			}
		}
	}
}
