package telephony

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptest"
	"github.com/parley-voice/parley/internal/store"
)

// hangUpOn ends every call it runs once the channel is closed.
type hangUpOn chan struct{}

func (c hangUpOn) Run(ctx context.Context, l *Live) call.Outcome {
	c.converse(ctx, l)
	return call.Outcome{}
}

func (c hangUpOn) converse(ctx context.Context, l *Live) {
	select {
	case <-c:
		l.End(call.CauseEndCallTool)
	case <-l.Session.Done():
	case <-ctx.Done():
	}
}

func fdTargets() []string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"->"+l)
	}
	return out
}

// openFDs counts the sockets and recordings open: what a call opens. (The
// database pool's files grow with concurrency and are not per call.)
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd to count file descriptors")
	}
	n := 0
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if strings.HasPrefix(l, "socket:") || strings.HasSuffix(l, ".wav") {
			n++
		}
	}
	return n
}

// settle waits for a count to come back to at most want (timers and
// transactions finish on their own schedule) and returns the last count.
func settle(want int, count func() int) int {
	deadline := time.Now().Add(40 * time.Second)
	n := count()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		n = count()
	}
	return n
}

func TestManyConcurrentCallsLeaveNothingBehind(t *testing.T) {
	siptest.RequireSipp(t)
	const calls = 200
	release := make(hangUpOn)
	e := newEnvMedia(t, 2*time.Minute, func(p *Phone, _ *callqueueOptions) { p.Conversation = release })
	e.org.ConcurrencyLimit = calls
	e.write(func(tx store.Tx) error { return tx.UpdateOrg(e.ctx, &e.org) })
	uas := siptest.UAS(t, "uas_answer_many", siptest.Options{Calls: calls, Limit: calls, Timeout: 90 * time.Second})
	a := e.agent(withTrunk(e.trunk(uas.Addr()).ID))

	baseG := runtime.NumGoroutine()
	baseFD := openFDs(t)

	start := time.Now()
	ids := make([]string, calls)
	for i := range ids {
		ids[i] = e.place(a, "+15557654321").ID
	}
	// All up at once, then all hung up.
	deadline := time.Now().Add(60 * time.Second)
	for e.ua.Active() < calls && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	peak := e.ua.Active()
	close(release)
	for _, id := range ids {
		wantEnd(t, e.waitFinal(id), model.CallCompleted, call.CauseEndCallTool)
	}
	if err := uas.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("peak concurrent legs seen: %d; calls over after %v", peak, time.Since(start))
	if peak != calls {
		t.Errorf("%d legs were up at once, want %d", peak, calls)
	}
	defer func() { t.Logf("settled after %v", time.Since(start)) }()
	if n := e.ua.Active(); n != 0 {
		t.Errorf("%d SIP legs still active", n)
	}
	// Goroutines and descriptors come back to the baseline: no leak per
	// call (a small slack for the runtime's own, and sipp's connection).
	if g := settle(baseG+5, runtime.NumGoroutine); g > baseG+5 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the calls, %d before:\n%s", g, baseG, buf[:runtime.Stack(buf, true)])
	}
	if fd := settle(baseFD, func() int { return openFDs(t) }); fd > baseFD {
		t.Errorf("%d open file descriptors after the calls, %d before (RTP sockets or recordings leaked): %v", fd, baseFD, fdTargets())
	}
}
