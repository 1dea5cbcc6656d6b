package pipeline

import (
	"context"
	"sync"
)

// waker lets the conversation's loop read the caller's audio itself, with
// no goroutine and no queue between the leg and the VAD, and still hear at
// once from the goroutines that report to it (a transcription done, a
// reply over, a timer): the loop reads under the waker's context, and a
// report cancels it, so the read returns and the loop takes the report.
// A frame is never lost to a wake: a canceled read consumes nothing.
type waker struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	woken  bool // a report came since the loop last asked for a context
}

// readCtx is the context for the loop's next read: canceled already when
// a report came since the loop last took its reports, so no report waits
// for the next frame. The loop only.
func (w *waker) readCtx(parent context.Context) context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil {
		w.ctx, w.cancel = context.WithCancel(parent)
	}
	if w.woken {
		w.cancel()
	}
	return w.ctx
}

// taking says the loop is about to take the reports waiting: a report
// made from now on wakes its next read. The loop only.
func (w *waker) taking() {
	w.mu.Lock()
	w.woken = false
	w.mu.Unlock()
}

// wake interrupts the loop's read, or the next one; any goroutine.
func (w *waker) wake() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.woken = true
	if w.cancel != nil {
		w.cancel()
	}
}

// stop releases the read context; the loop, once it reads no more.
func (w *waker) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		w.cancel()
	}
}
