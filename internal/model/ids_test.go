package model

import "testing"

// Message ids sort in creation order, even within one millisecond: the
// store breaks created_at ties by id, so a thread keeps its order.
func TestMessageIDsSortInCreationOrder(t *testing.T) {
	prev := NewMessageID()
	for range 10000 {
		id := NewMessageID()
		if len(id) != 28 || id[:4] != "msg_" || id <= prev {
			t.Fatalf("%q after %q", id, prev)
		}
		prev = id
	}
}
