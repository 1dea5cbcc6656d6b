package callqueue

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
)

// BenchmarkPlace measures POST /calls' admission step in a steady state: the
// decision under the organization's lock and the insert, from concurrent
// requests (GOMAXPROCS×4 goroutines), on each engine, while the queue runs
// the calls (each answered and hung up at once, so lines churn under a limit
// of 100 and later requests queue). Reports placements per second and the
// p50/p99 latency of one placement.
func BenchmarkPlace(b *testing.B) {
	for engine, open := range engines(b) {
		b.Run(engine, func(b *testing.B) {
			h := newHarness(b, open(b), 100)
			h.dialer.Script = func(call.DialRequest) calltest.Script {
				return calltest.Script{Answer: true, HangupAfterAnswer: true}
			}
			var (
				mu   sync.Mutex
				lats []time.Duration
				n    atomic.Int64
			)
			b.SetParallelism(4)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				var local []time.Duration
				for pb.Next() {
					i := n.Add(1)
					t0 := time.Now()
					if _, err := h.place(fmt.Sprintf("+1%010d", i), false); err != nil {
						b.Error(err)
						return
					}
					local = append(local, time.Since(t0))
				}
				mu.Lock()
				lats = append(lats, local...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lats)
			if len(lats) > 0 {
				b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "placed/s")
				b.ReportMetric(float64(lats[len(lats)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "p99-µs")
			}
			h.crash() // skip hanging up the calls still live one by one
		})
	}
}
