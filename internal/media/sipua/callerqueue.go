package sipua

import "time"

// callerQueue is the caller's frames waiting for the Audio reader: a ring
// of preallocated frames the RTP reader decodes into, so no frame is
// allocated on the way in; when the reader falls a second behind the
// oldest is dropped. The leg's mu guards it, except ready.
type callerQueue struct {
	pcm     []int16 // slots of a frame each
	at      []time.Time
	frame   int
	head, n int
	// ready has a token while frames may be waiting: the reader's wake-up.
	ready chan struct{}
}

func newCallerQueue(frames, frame int) callerQueue {
	return callerQueue{
		pcm: make([]int16, frames*frame), at: make([]time.Time, frames), frame: frame,
		ready: make(chan struct{}, 1),
	}
}

func (q *callerQueue) slot(i int) []int16 {
	i %= len(q.at)
	return q.pcm[i*q.frame : (i+1)*q.frame]
}

// push queues a frame (nil: silence) that arrived at at (zero: filled in),
// dropping the oldest when full.
func (q *callerQueue) push(f []int16, at time.Time) {
	if q.n == len(q.at) {
		q.head, q.n = (q.head+1)%len(q.at), q.n-1
	}
	s := q.slot(q.head + q.n)
	if f == nil {
		clear(s)
	} else {
		copy(s, f)
	}
	q.at[(q.head+q.n)%len(q.at)] = at
	q.n++
	q.signal()
}

// pop copies the oldest frame into dst and drops it; ok is false when none
// waits.
func (q *callerQueue) pop(dst []int16) (at time.Time, ok bool) {
	if q.n == 0 {
		return time.Time{}, false
	}
	copy(dst, q.slot(q.head))
	at = q.at[q.head]
	q.head, q.n = (q.head+1)%len(q.at), q.n-1
	if q.n > 0 {
		q.signal() // for another reader
	}
	return at, true
}

func (q *callerQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
