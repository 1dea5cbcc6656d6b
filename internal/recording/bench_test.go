package recording

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
)

// BenchmarkTick is what a pacer pays per 20 ms tick of a leg to record it
// at 8 kHz: the caller's and the agent's frame handed to the recording,
// for 100 recordings in turn, as a pacer walks its legs. The encoding and
// the file writes count only where they happen on the tick. Ticks come far
// faster than every 20 ms here, so after each half second of them the
// clock stops while the writer catches up (settle), as it would between
// real ticks.
func BenchmarkTick(b *testing.B) {
	const calls = 100
	ws := make([]*Writer, calls)
	for i := range ws {
		ws[i] = create(b, &Store{Dir: fmt.Sprintf("%s/%d", b.TempDir(), i), Key: []byte("k")}, "call", 8000)
	}
	caller := audio.Tone(440, 8000, 20*time.Millisecond, 0.5)
	agent := audio.Tone(1000, 8000, 20*time.Millisecond, 0.5)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		ws[n%calls].Write(caller, agent)
		if n++; n%(25*calls) == 0 {
			b.StopTimer()
			for _, w := range ws {
				settle(w)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	for _, w := range ws {
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordedMinute is the whole cost of a minute of an 8 kHz
// recording, wherever it is paid: 100 calls recorded at once into one
// store, 3,000 ticks each, their encoding and writes (waited for after each
// half second: settle), the files' creation and their Close. cpu-ns/op is
// the process's CPU time (user and system) per call-minute, on whichever
// goroutine it was spent.
func BenchmarkRecordedMinute(b *testing.B) {
	const calls = 100
	s := &Store{Dir: b.TempDir(), Key: []byte("k")}
	caller := audio.Tone(440, 8000, 20*time.Millisecond, 0.5)
	agent := audio.Tone(1000, 8000, 20*time.Millisecond, 0.5)
	ws := make([]*Writer, calls)
	b.ReportAllocs()
	before := cpuTime(b)
	for b.Loop() {
		for i := range ws {
			ws[i] = create(b, s, fmt.Sprint("call-", i), 8000)
		}
		for n := range 60 * 50 {
			for _, w := range ws {
				w.Write(caller, agent)
			}
			if (n+1)%25 == 0 {
				for _, w := range ws {
					settle(w)
				}
			}
		}
		for _, w := range ws {
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N*calls), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
