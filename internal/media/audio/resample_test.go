package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// resampleAll runs src through a fresh Resampler in frames of the given
// size (0: one block).
func resampleAll(from, to int, src []int16, frame int) []int16 {
	r := NewResampler(from, to)
	if frame <= 0 {
		return r.Process(nil, src)
	}
	var out []int16
	for len(src) > 0 {
		n := min(frame, len(src))
		out = r.Process(out, src[:n])
		src = src[n:]
	}
	return out
}

// steady drops the edges, where the filter's delay and start-up live.
func steady(pcm []int16, rate int) []int16 {
	edge := rate / 20 // 50 ms
	return pcm[edge : len(pcm)-edge]
}

func TestResamplerToneSurvivesRoundTrip(t *testing.T) {
	const from = 8000
	tone := Tone(1000, from, time.Second, 0.5)
	want := RMS(steady(tone, from))
	for _, to := range []int{16000, 24000, 48000, 11025, 44100} {
		t.Run(fmt.Sprint(to), func(t *testing.T) {
			up := resampleAll(from, to, tone, media20ms(from))
			if !DetectTone(steady(up, to), to, 1000) {
				t.Errorf("1 kHz not detected at %d Hz (share %.3f)", to, ToneShare(steady(up, to), to, 1000))
			}
			if got := RMS(steady(up, to)); math.Abs(got-want) > 0.1*want {
				t.Errorf("RMS at %d Hz = %.4f, want %.4f ±10%%", to, got, want)
			}
			back := resampleAll(to, from, up, media20ms(to))
			if len(back) != len(tone) {
				t.Errorf("round trip gave %d samples, want %d", len(back), len(tone))
			}
			if !DetectTone(steady(back, from), from, 1000) {
				t.Errorf("1 kHz not detected after round trip (share %.3f)", ToneShare(steady(back, from), from, 1000))
			}
			if got := RMS(steady(back, from)); math.Abs(got-want) > 0.1*want {
				t.Errorf("RMS after round trip = %.4f, want %.4f ±10%%", got, want)
			}
		})
	}
}

func media20ms(rate int) int { return rate / 50 }

// Framing must not matter: 10 s fed as 20 ms frames gives exactly the
// samples of one block, and exactly 10 s of them.
func TestResamplerFramesMatchBlock(t *testing.T) {
	rates := []int{8000, 16000, 24000, 48000, 44100}
	for _, from := range rates {
		for _, to := range rates {
			t.Run(fmt.Sprintf("%d-%d", from, to), func(t *testing.T) {
				t.Parallel()
				src := noise(from, 10*time.Second, 0.3, uint64(from*to))
				block := resampleAll(from, to, src, 0)
				framed := resampleAll(from, to, src, media20ms(from))
				if want := 10 * to; len(block) != want || len(framed) != want {
					t.Fatalf("block %d, framed %d samples; want %d", len(block), len(framed), want)
				}
				if i := firstDiff(block, framed); i >= 0 {
					t.Fatalf("framed output differs from block at sample %d: %d vs %d", i, framed[i], block[i])
				}
			})
		}
	}
}

// Every 20 ms frame in gives a 20 ms frame out, from the first.
func TestResamplerFrameInFrameOut(t *testing.T) {
	for _, rates := range [][2]int{{8000, 16000}, {16000, 8000}, {8000, 48000}, {48000, 8000}, {44100, 8000}, {8000, 44100}, {24000, 16000}} {
		r := NewResampler(rates[0], rates[1])
		in := make([]int16, media20ms(rates[0]))
		for i := range 100 {
			if got := len(r.Process(nil, in)); got != media20ms(rates[1]) {
				t.Fatalf("%d->%d: frame %d gave %d samples, want %d", rates[0], rates[1], i, got, media20ms(rates[1]))
			}
		}
	}
}

// Ragged chunks and ratios that do not divide: the running total is always
// ceil(N·to/from), and the samples match one block.
func TestResamplerRaggedChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rates := range [][2]int{{8000, 44100}, {44100, 8000}, {48000, 47999}, {7919, 8000}, {8000, 3}, {1, 8000}} {
		from, to := rates[0], rates[1]
		t.Run(fmt.Sprintf("%d-%d", from, to), func(t *testing.T) {
			src := noise(from, time.Second, 0.3, 7)
			block := resampleAll(from, to, src, 0)
			r := NewResampler(from, to)
			var out []int16
			total := 0
			for rest := src; len(rest) > 0; {
				n := min(rng.IntN(700), len(rest))
				out = r.Process(out, rest[:n])
				rest = rest[n:]
				total += n
				if want := ceilDiv(total*to, from); len(out) != want {
					t.Fatalf("after %d input samples: %d output, want %d", total, len(out), want)
				}
			}
			if i := firstDiff(block, out); i >= 0 {
				t.Fatalf("chunked output differs from block at %d", i)
			}
		})
	}
}

// The large-table fallback (odd rate pairs) still resamples properly.
func TestResamplerOddRatio(t *testing.T) {
	const from, to = 47999, 48000
	if r := NewResampler(from, to); r.rows != nil {
		t.Fatal("expected the fine-kernel path for 47999->48000")
	}
	tone := Tone(1000, from, time.Second, 0.5)
	out := resampleAll(from, to, tone, media20ms(from))
	if !DetectTone(steady(out, to), to, 1000) {
		t.Errorf("1 kHz lost (share %.3f)", ToneShare(steady(out, to), to, 1000))
	}
	if got, want := RMS(steady(out, to)), RMS(steady(tone, from)); math.Abs(got-want) > 0.01*want {
		t.Errorf("RMS %.4f, want %.4f", got, want)
	}
}

// Downsampling must filter what the lower rate cannot carry instead of
// folding it into the phone band.
func TestResamplerRejectsAliases(t *testing.T) {
	for _, from := range []int{16000, 24000, 44100, 48000} {
		tone := Tone(5500, from, time.Second, 0.9) // above 4 kHz
		out := steady(resampleAll(from, 8000, tone, media20ms(from)), 8000)
		if got := RMS(out); got > 0.001 { // -60 dBFS against -4 dBFS in
			t.Errorf("%d->8000: 5.5 kHz leaks through at RMS %.5f", from, got)
		}
	}
}

func TestResamplerSameRateCopies(t *testing.T) {
	src := noise(16000, 100*time.Millisecond, 0.5, 3)
	r := NewResampler(16000, 16000)
	out := r.Process([]int16{42}, src)
	if out[0] != 42 || !slices.Equal(out[1:], src) {
		t.Fatal("from == to is not a copy")
	}
	out[1]++
	if out[1] == src[0] {
		t.Fatal("output aliases the input")
	}
}

func TestNewResamplerPanicsOnBadRates(t *testing.T) {
	for _, rates := range [][2]int{{0, 8000}, {8000, 0}, {-8000, 8000}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewResampler(%d, %d) did not panic", rates[0], rates[1])
				}
			}()
			NewResampler(rates[0], rates[1])
		}()
	}
}

func noise(rate int, d time.Duration, rms float64, seed uint64) []int16 {
	rng := rand.New(rand.NewPCG(seed, 0))
	out := make([]int16, samples(rate, d))
	for i := range out {
		out[i] = int16(max(-32768, min(32767, math.Round(rng.NormFloat64()*rms*fullScale))))
	}
	return out
}

func firstDiff(a, b []int16) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
