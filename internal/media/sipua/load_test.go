package sipua

import (
	"context"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// loopbackCalls is pairs calls between two UAs on loopback, every leg with
// a recorder attached and its caller audio read at 8 kHz as the engine
// would, each side hearing the other's comfort silence.
type loopbackCalls struct {
	legs    []*Leg
	base    int // goroutines with both UAs up and no call
	readers sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

func startLoopbackCalls(tb testing.TB, pairs int) *loopbackCalls {
	tb.Helper()
	answered := make(chan *Leg, pairs)
	newUA := func(h Handler) *UA {
		ua, err := New(Config{ListenAddr: "127.0.0.1:0", Logger: discard(), MaxDialogs: 4 * pairs})
		if err != nil {
			tb.Fatal(err)
		}
		if err := ua.Start(context.Background(), h); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { ua.Close() })
		return ua
	}
	callee := newUA(answerAll(nil, answered))
	caller := newUA(nil)
	c := &loopbackCalls{base: settledGoroutines()}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	tb.Cleanup(c.stop)
	host, port := splitHostPort(callee.Addr())
	for range pairs {
		out, err := caller.Dial(context.Background(), Target{Host: host, Port: port, User: "+15552223333", FromUser: "+15550001111"}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		c.legs = append(c.legs, out, <-answered)
	}
	for _, l := range c.legs {
		l.SetRecorder(func(caller, ours []int16) {})
		a := l.Audio(Rate)
		c.readers.Add(1)
		go func() {
			defer c.readers.Done()
			for {
				if _, err := a.Read(c.ctx); err != nil {
					return
				}
			}
		}()
	}
	return c
}

// stop ends the readers and hangs every leg up.
func (c *loopbackCalls) stop() {
	c.cancel()
	c.readers.Wait()
	for _, l := range c.legs {
		_ = l.Hangup(context.Background())
	}
	c.legs = nil
}

// settledGoroutines is the goroutine count once it stops changing (legs
// starting or ending spawn and end short-lived ones).
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

// The goroutines a live leg costs, whatever runs underneath (sipgo's
// transactions, diago's RTP and RTCP, our pacers and reader): issue 15's
// budget is 4 per call, engine included. A leg has its RTP reader; an
// answered one also the handler that answered it (the application's).
func TestGoroutinesPerLeg(t *testing.T) {
	const pairs = 25
	before := liveMemory()
	c := startLoopbackCalls(t, pairs)
	live := settledGoroutines()
	t.Logf("%d legs: %.0f KiB of heap and stacks each", len(c.legs), float64(liveMemory()-before)/float64(len(c.legs))/1024)
	// Each leg's Audio reader is the engine's, not the leg's.
	perLeg := float64(live-c.base-len(c.legs)) / float64(len(c.legs))
	t.Logf("%d legs: %d goroutines with no call, %d with the legs up: %.2f per leg", len(c.legs), c.base, live, perLeg)
	if perLeg > maxGoroutinesPerLeg {
		t.Errorf("%.2f goroutines per live leg, want at most %d", perLeg, maxGoroutinesPerLeg)
	}
}

// liveMemory is the heap and goroutine stacks in use after a collection.
func liveMemory() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// maxGoroutinesPerLeg is the budget TestGoroutinesPerLeg holds a leg to.
const maxGoroutinesPerLeg = 2

// BenchmarkLoopbackLegs holds 100 legs (50 calls between two UAs on
// loopback) with recorders and readers for the benchmark's time and
// reports the process's CPU per leg-second: the media path's cost under
// load, SIP set-up excluded. Run with -benchtime 10x (each iteration is one
// second of the legs being up).
func BenchmarkLoopbackLegs(b *testing.B) {
	c := startLoopbackCalls(b, 50)
	settledGoroutines()
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		time.Sleep(time.Second)
	}
	b.StopTimer()
	var after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	legSeconds := time.Since(start).Seconds() * float64(len(c.legs))
	cpu := cpuOf(after) - cpuOf(before)
	b.ReportMetric(cpu.Seconds()*1000/legSeconds, "cpu_ms/leg_s")
}

func cpuOf(r syscall.Rusage) time.Duration {
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
