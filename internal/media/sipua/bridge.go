package sipua

import "github.com/parley-voice/parley/internal/media/audio"

// Bridge connects two legs: from the next 20 ms tick each hears the other.
// Recorders stay attached, so a leg's recording goes on across the bridge.
// The legs' Audio readers get nothing while bridged. Legs at different
// rates (G.722 and G.711) hear each other resampled.
func Bridge(a, b *Leg) {
	link := func(from, to *Leg) {
		from.mu.Lock()
		from.peer, from.toPeer = to, nil
		if from.rate != to.rate {
			from.toPeer = audio.NewResampler(from.rate, to.rate)
		}
		from.mu.Unlock()
	}
	link(a, b)
	link(b, a)
}

// Unbridge disconnects two bridged legs.
func Unbridge(a, b *Leg) {
	for _, l := range []*Leg{a, b} {
		l.mu.Lock()
		l.peer, l.toPeer = nil, nil
		l.mu.Unlock()
	}
}
