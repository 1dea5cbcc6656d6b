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
		ws[i] = create(b, &Store{Dir: fmt.Sprintf("%s/%d", b.TempDir(), i), Key: []byte("k")}, 8000)
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

// BenchmarkRecordedMinute is the whole cost of one minute of an 8 kHz
// recording, wherever it is paid: 3,000 ticks, their encoding and writes
// (waited for after each half second: settle), the file's creation and
// its Close. cpu-ns/op is the process's CPU time (user and system), on
// whichever goroutine it was spent.
func BenchmarkRecordedMinute(b *testing.B) {
	s := &Store{Dir: b.TempDir(), Key: []byte("k")}
	caller := audio.Tone(440, 8000, 20*time.Millisecond, 0.5)
	agent := audio.Tone(1000, 8000, 20*time.Millisecond, 0.5)
	b.ReportAllocs()
	before := cpuTime(b)
	for b.Loop() {
		w := create(b, s, 8000)
		for i := range 60 * 50 {
			w.Write(caller, agent)
			if (i+1)%25 == 0 {
				settle(w)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
