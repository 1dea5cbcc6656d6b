package audio

import (
	"testing"
	"time"
)

// The per-frame work of a live call's audio path: what each 20 ms frame
// costs, so the share of a core one call needs can be read off.

func BenchmarkResample8kTo16kFrame(b *testing.B) {
	benchResample(b, NewResampler(8000, 16000), 8000)
}

func BenchmarkResample24kTo8kFrame(b *testing.B) {
	benchResample(b, NewResampler(24000, 8000), 24000)
}

func BenchmarkG711Frame(b *testing.B) {
	pcm := Tone(440, 8000, 20*time.Millisecond, 0.5)
	enc := make([]byte, 0, 160)
	dec := make([]int16, 0, 160)
	for b.Loop() {
		enc = EncodeULaw(enc[:0], pcm)
		dec = DecodeULaw(dec[:0], enc)
	}
}

// BenchmarkG722Frame is one 20 ms frame at 16 kHz encoded and decoded: a
// G.722 leg's codec work per frame, both ways.
func BenchmarkG722Frame(b *testing.B) {
	pcm := Tone(440, 16000, 20*time.Millisecond, 0.5)
	e, d := NewG722Encoder(), NewG722Decoder()
	enc := make([]byte, 0, 160)
	dec := make([]int16, 0, 320)
	for b.Loop() {
		enc = e.Encode(enc[:0], pcm)
		dec = d.Decode(dec[:0], enc)
	}
}

// BenchmarkHighPass4Frame is the VAD's and the beep meter's high-pass on
// one 20 ms frame at 8 kHz, on speech and on the digital silence that
// follows it (G.711 0xFF decodes to exact zeros): the two must cost the
// same, which they do not if the filter's memory decays into subnormals.
func BenchmarkHighPass4Frame(b *testing.B) {
	const rate, n = 8000, 160
	signal := speechThenSilence(rate)
	for _, c := range []struct {
		name  string
		frame []float64
	}{{"speech", signal[rate/2 : rate/2+n]}, {"silence", signal[3*rate : 3*rate+n]}} {
		b.Run(c.name, func(b *testing.B) {
			hp := HighPass4(200, rate)
			for _, x := range signal[:rate] { // speech first: memory is not zero
				hp[1].Step(hp[0].Step(x))
			}
			if c.name == "silence" {
				for _, x := range signal[rate : 3*rate] {
					hp[1].Step(hp[0].Step(x))
				}
			}
			var sink float64
			for b.Loop() {
				for _, x := range c.frame {
					sink += hp[1].Step(hp[0].Step(x))
				}
			}
			_ = sink
		})
	}
}

// BenchmarkResample24kTo8kFrameSinc is BenchmarkResample24kTo8kFrame with
// the windowed sinc the 3:1 decimator replaced, for the comparison.
func BenchmarkResample24kTo8kFrameSinc(b *testing.B) {
	benchResample(b, newSincResampler(24000, 8000), 24000)
}

// BenchmarkResample24kTo16kFrame is a 24 kHz voice brought to a G.722
// line, and its Sinc twin the windowed sinc that conversion used before.
func BenchmarkResample24kTo16kFrame(b *testing.B) {
	benchResample(b, NewResampler(24000, 16000), 24000)
}

func BenchmarkResample24kTo16kFrameSinc(b *testing.B) {
	benchResample(b, newSincResampler(24000, 16000), 24000)
}

// benchResample times r on a 20 ms frame of a tone at rate from.
func benchResample(b *testing.B, r *Resampler, from int) {
	in := Tone(440, from, 20*time.Millisecond, 0.5)
	out := make([]int16, 0, 960)
	for b.Loop() {
		out = r.Process(out[:0], in)
	}
}
