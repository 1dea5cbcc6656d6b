package recording

import (
	"slices"
	"sync"
	"time"
)

// flushEvery is how often the flusher looks for blocks to write. A tick
// that fills a block only puts its recording on the list: waking the
// flusher from the pacer would cost the pacer a scheduler wake-up (a
// futex call when a core is idle), many times what its tick costs. So a
// block waits up to this long, and a crash loses at most half a second and
// this of a recording (0.52 s).
const flushEvery = 20 * time.Millisecond

// flusher is a Store's writer: one goroutine that encodes every open
// recording's ticks and writes them to its file, a block at a time, so no
// call's media clock waits for a disk. It runs while the Store has a
// recording open and ends when the last one is closed. One goroutine for
// all recordings rather than one each: a call's goroutines are counted,
// and a block per recording every half second is little work.
type flusher struct {
	mu      sync.Mutex
	open    int           // recordings created and not yet finished
	running bool          // the goroutine runs
	due     []*Writer     // recordings with a block to write, or closed
	wake    chan struct{} // a Close is waiting

	// The goroutine's own.
	walk []*Writer // its copy of due
	buf  []byte    // the block being encoded

	// afterRound, when set (by tests, before the first recording), is
	// called after each round that wrote something.
	afterRound func()
}

// add counts a new recording in, starting the goroutine if it is not
// running.
func (fl *flusher) add() {
	fl.mu.Lock()
	fl.open++
	// Room on the list for every open recording: a tick that queues one
	// never allocates.
	fl.due = slices.Grow(fl.due, fl.open-len(fl.due))
	if fl.wake == nil {
		fl.wake = make(chan struct{}, 1)
	}
	start := !fl.running
	fl.running = true
	fl.mu.Unlock()
	if start {
		go fl.run()
	}
}

// queue puts w on the list, to have its ticks written on the flusher's
// next round. A recording is on the list at most once at a time
// (Writer.queued).
func (fl *flusher) queue(w *Writer) {
	fl.mu.Lock()
	fl.due = append(fl.due, w)
	fl.mu.Unlock()
}

// poke starts a round now: a Close waits for it.
func (fl *flusher) poke() {
	fl.mu.Lock()
	wake := fl.wake
	fl.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default: // a round is due already
	}
}

// run writes what is due, every flushEvery and whenever a Close waits,
// until no recording is open.
func (fl *flusher) run() {
	round := time.NewTicker(flushEvery)
	defer round.Stop()
	for {
		fl.mu.Lock()
		if len(fl.due) == 0 {
			if fl.open == 0 {
				fl.running = false
				fl.mu.Unlock()
				return
			}
			wake := fl.wake
			fl.mu.Unlock()
			select {
			case <-round.C:
			case <-wake:
			}
			continue
		}
		fl.walk = append(fl.walk[:0], fl.due...)
		clear(fl.due)
		fl.due = fl.due[:0]
		fl.mu.Unlock()
		for _, w := range fl.walk {
			var finished bool
			if fl.buf, finished = w.flush(fl.buf); finished {
				fl.mu.Lock()
				fl.open--
				fl.mu.Unlock()
				close(w.done)
			}
		}
		clear(fl.walk) // hold no finished recording
		if fl.afterRound != nil {
			fl.afterRound()
		}
	}
}
