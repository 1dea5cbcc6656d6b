package sipua

// Bridge connects two legs: from the next 20 ms tick each hears the other.
// Recorders stay attached, so a leg's recording goes on across the bridge.
// The legs' Audio readers get nothing while bridged.
func Bridge(a, b *Leg) {
	a.mu.Lock()
	a.peer = b
	a.mu.Unlock()
	b.mu.Lock()
	b.peer = a
	b.mu.Unlock()
}

// Unbridge disconnects two bridged legs.
func Unbridge(a, b *Leg) {
	for _, l := range []*Leg{a, b} {
		l.mu.Lock()
		l.peer = nil
		l.mu.Unlock()
	}
}
