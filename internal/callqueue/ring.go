package callqueue

import (
	"sync"
	"sync/atomic"
)

// ringWrite writes an outbound call's RINGING behind its dial, not in its
// way: a database that is slow or away must not hold up the answer the
// far end is about to send. The worker waits for it before it writes the
// call's next change, so changes land in order.
type ringWrite struct {
	once    sync.Once
	started atomic.Bool
	done    chan struct{}
}

// start runs write in the background, the first time only. The Dialer
// calls it during Dial.
func (r *ringWrite) start(write func()) {
	r.once.Do(func() {
		r.done = make(chan struct{})
		r.started.Store(true)
		go func() {
			defer close(r.done)
			write()
		}()
	})
}

// wait returns once the write start began has ended (at once if none did).
func (r *ringWrite) wait() {
	if r.started.Load() {
		<-r.done
	}
}
