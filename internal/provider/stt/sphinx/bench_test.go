package sphinx

import "testing"

// BenchmarkConditioner is one 20 ms frame of an 8 kHz leg conditioned for
// the recogniser (resampled to 16 kHz, levelled, the empty band filled
// through a high-pass), on speech and on the digital silence after it. The
// band fill's high-pass runs on noise, so its memory never decays; the two
// cost the same.
func BenchmarkConditioner(b *testing.B) {
	const rate, n = 8000, 160
	speech := tone(rate, 440, 0.1, 1)
	for _, c := range []struct {
		name  string
		frame []int16
	}{{"speech", speech[:n]}, {"silence", make([]int16, n)}} {
		b.Run(c.name, func(b *testing.B) {
			cond := NewConditioner(rate)
			out := cond.Process(nil, speech)
			for range 100 { // 2 s of the frame first: silence has settled
				out = cond.Process(out[:0], c.frame)
			}
			for b.Loop() {
				out = cond.Process(out[:0], c.frame)
			}
		})
	}
}
