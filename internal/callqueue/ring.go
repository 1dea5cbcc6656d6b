package callqueue

import "sync"

// ringWrite writes an outbound call's RINGING behind its dial, not in its
// way: a database that is slow or away must not hold up the answer the
// far end is about to send. The worker waits for it before it writes the
// call's next change, so changes land in order; but an answer that comes
// before the write's transaction began takes its place (fold): the call
// goes from INITIATED to IN_PROGRESS in one write, a step the state
// machine allows, and the ringing write, when it begins, writes nothing.
// Nothing is lost by it: a call whose answer is not written is reaped as
// before, and a ringing leg's saved state would only have let the reaper
// CANCEL a leg that is already answered, which a CANCEL does not end.
type ringWrite struct {
	mu    sync.Mutex
	state ringState
	done  chan struct{} // closed when the write's goroutine ends
}

type ringState int

const (
	ringIdle    ringState = iota // the dial has not rung
	ringPending                  // the write is on its way, its transaction not begun
	ringWriting                  // its transaction began: it may land
	ringFolded                   // the answer took its place
)

// start runs write in the background, the first time only. The Dialer
// calls it during Dial. write asks begin as its transaction begins (each
// try) and writes nothing when it says false.
func (r *ringWrite) start(write func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != ringIdle {
		return
	}
	r.state, r.done = ringPending, make(chan struct{})
	go func() {
		defer close(r.done)
		write()
	}()
}

// begin claims the change for the ringing write: false once the answer
// has taken its place.
func (r *ringWrite) begin() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == ringFolded {
		return false
	}
	r.state = ringWriting
	return true
}

// folded says whether the answer took the write's place.
func (r *ringWrite) folded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == ringFolded
}

// fold is called once the call is answered: true when the ringing write
// had not begun, and now never will; otherwise it waits for that write.
func (r *ringWrite) fold() bool {
	r.mu.Lock()
	if r.state == ringPending {
		r.state = ringFolded
		r.mu.Unlock()
		return true
	}
	r.mu.Unlock()
	r.wait()
	return false
}

// wait returns once the write start began has ended (at once if none did).
func (r *ringWrite) wait() {
	r.mu.Lock()
	idle := r.state == ringIdle
	r.mu.Unlock()
	if !idle {
		<-r.done
	}
}

// rang says whether start was called.
func (r *ringWrite) rang() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state != ringIdle
}
