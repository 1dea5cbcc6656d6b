package pipeline

import (
	"slices"
	"testing"
)

// TestFrameQueue: a streaming recognizer takes the frames in the order the
// loop pushed them, however far behind it falls, up to the limit, and sees
// the end once it has taken everything pushed before the close.
func TestFrameQueue(t *testing.T) {
	q := newFrameQueue(5)
	taken := make(chan []int16)
	go func() {
		defer close(taken)
		var batch [][]int16
		var ok bool
		for batch, ok = q.take(batch); ok; batch, ok = q.take(batch) {
			for _, f := range batch {
				taken <- f
			}
		}
	}()
	for i := range int16(7) { // two over the limit: not transcribed
		q.push([]int16{i})
	}
	q.close()
	q.push([]int16{99}) // after the end: dropped
	var got []int16
	for f := range taken {
		got = append(got, f...)
	}
	if want := []int16{0, 1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("took %v, want %v", got, want)
	}
}
