package sqlstore

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestAppendDocumentCostsTheSameAtAnyLength: appending to a call's
// transcript splices the new entry onto the stored text, so it makes as
// many allocations after 400 entries as after 1 (decoding and re-encoding
// the whole transcript made each turn of a long call dearer than the last),
// and the result is the array with the entry numbered at its end.
func TestAppendDocumentCostsTheSameAtAnyLength(t *testing.T) {
	transcript := func(n int) []byte {
		es := []map[string]any{}
		for i := range n {
			es = append(es, map[string]any{"seq": i, "role": "user", "text": fmt.Sprintf("turn %d of a long call", i)})
		}
		b, err := json.Marshal(es)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	entry := []map[string]any{{"role": "assistant", "text": "Certainly, a table for two."}}
	allocs := func(n int) float64 {
		cur := transcript(n)
		return testing.AllocsPerRun(50, func() {
			if _, err := appendDocument(cur, n, entry); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A little slack: under the race detector sync.Pool drops what it holds at
	// random, so json.Marshal's buffers cost an allocation now and then.
	if short, long := allocs(300), allocs(3000); long > short+2 {
		t.Errorf("an append makes %v allocations after 3,000 entries, %v after 300", long, short)
	}

	for _, n := range []int{0, 3} {
		doc, err := appendDocument(transcript(n), n, entry)
		if err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("%d entries then one: %v in %s", n, err, doc)
		}
		if len(got) != n+1 || got[n]["seq"] != float64(n) || got[n]["text"] != entry[0]["text"] {
			t.Errorf("%d entries then one: %s", n, doc)
		}
	}
	if _, ok := entry[0]["seq"]; ok {
		t.Error("the caller's entry was changed")
	}
	if _, err := appendDocument([]byte("null"), 0, entry); err == nil {
		t.Error("a transcript that is not an array was appended to")
	}
}
