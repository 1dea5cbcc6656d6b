package callqueue

// Draining: a server shutting down takes no new call but lets its live
// ones finish. From Drain on, its dispatcher admits no queued call (on a
// shared database another server's does, as lines free; with SQLite the
// next start), and a call placed here is stored queued for them instead
// of starting here; one that must start at once (skipQueue) is refused
// with ErrDraining and nothing is stored. Inbound calls are still
// answered: the SIP side refuses new ones before they reach the queue and
// lets through only the legs of our own calls (the loopback trunk).
// Live calls go on until Run's context ends, then drain up to
// Options.Drain.

// Drain makes the queue start no new call, as above. It does not block.
func (q *Queue) Drain() { q.draining.Store(true) }

// drainingRefuses, while draining, makes a placement wait in the queue
// (free becomes false) or, for a skipQueue one, returns ErrDraining.
func (q *Queue) drainingRefuses(p *placing, free *bool) error {
	if !q.draining.Load() {
		return nil
	}
	if p.skipQueue {
		return ErrDraining
	}
	*free = false
	return nil
}

// Live is the number of calls this server runs (each holds a line).
func (q *Queue) Live() int { return q.liveCount() }
