package recording

import "testing"

// rounds tells settle when a store's flusher finished a round.
var rounds = map[*flusher]chan struct{}{}

// create starts a recording for a benchmark that settles it.
func create(b *testing.B, s *Store, callID string, rate int) *Writer {
	if rounds[&s.flusher] == nil {
		done := make(chan struct{}, 1)
		s.flusher.afterRound = func() {
			select {
			case done <- struct{}{}:
			default:
			}
		}
		rounds[&s.flusher] = done
	}
	w, err := s.Create("org", callID, rate)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// settle has the flusher write every whole block w holds, now, and waits
// for it: between real ticks there is time for that.
func settle(w *Writer) {
	for behind(w) {
		<-rounds[w.fl]
	}
}

// behind reports whether w holds a whole block its flusher has not
// written, and if so wakes the flusher.
func behind(w *Writer) bool {
	w.mu.Lock()
	b := w.tail-w.head >= blockTicks
	w.mu.Unlock()
	if b {
		w.fl.poke()
	}
	return b
}
