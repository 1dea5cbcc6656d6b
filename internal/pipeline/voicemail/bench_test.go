package voicemail

import (
	"strconv"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// BenchmarkFrame is the cost of one 20 ms frame of a call's first seconds:
// noise, a tone and noise again, looped (the verdict is reached on the first
// loop; after it every frame still runs the VAD and the beep detector).
func BenchmarkFrame(b *testing.B) {
	for _, rate := range rates {
		b.Run(strconv.Itoa(rate), func(b *testing.B) {
			pcm := concat(noise(rate, time.Second, -30, 9), audio.Tone(1000, rate, 500*time.Millisecond, 0.3), noise(rate, time.Second, -60, 10))
			n := rate / 50
			frames := len(pcm) / n
			d := New(Config{Rate: rate})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				f := i % frames
				d.Frame(pcm[f*n : f*n+n])
			}
		})
	}
}

// BenchmarkToneMeter is the beep meter (high-pass, window, FFT) on one
// 20 ms block of sound and on the digital silence after it: the two must
// cost about the same.
func BenchmarkToneMeter(b *testing.B) {
	for _, rate := range rates {
		for _, quiet := range []bool{false, true} {
			name := strconv.Itoa(rate) + "/sound"
			if quiet {
				name = strconv.Itoa(rate) + "/silence"
			}
			b.Run(name, func(b *testing.B) {
				block := rate / 50
				pcm := speechThenSilence(rate)
				m := newToneMeter(rate, block)
				end := rate / 2
				if quiet {
					end = 3 * rate
				}
				for i := 0; i+block <= end; i += block {
					m.measure(pcm[i : i+block])
				}
				frame := pcm[end : end+block]
				b.ReportAllocs()
				for b.Loop() {
					m.measure(frame)
				}
			})
		}
	}
}
