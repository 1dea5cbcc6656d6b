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
