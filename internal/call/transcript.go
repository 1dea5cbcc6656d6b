package call

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store"
)

// Transcript appends to a running call's transcript: the one way code
// outside the queue writes to a call's record. It cannot change any other
// field, and appends from several writers all land (the store locks the
// row while it appends and numbers each entry's seq in landing order).
type Transcript struct {
	Store store.Store
	// Writes retries an append the database does not take (nil: the
	// defaults of persist).
	Writes        *persist.Writer
	OrgID, CallID string
	// Answered is when the call was answered: entries' "at" counts from it.
	Answered time.Time
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// NewTranscript is the transcript of c, answered at answered (c's startedAt
// when the record has it already).
func NewTranscript(st store.Store, c model.Call, answered time.Time) *Transcript {
	if c.StartedAt != nil {
		answered = *c.StartedAt
	}
	return &Transcript{Store: st, OrgID: c.OrgID, CallID: c.ID, Answered: answered}
}

// Append adds e at the end of the transcript, stamped with "at" (seconds
// since the answer, to the millisecond); "seq" is set by the store.
func (t *Transcript) Append(ctx context.Context, e map[string]any) error {
	t.Stamp(e)
	return t.AppendStamped(ctx, []map[string]any{e})
}

// Stamp sets e's "at" to now, for an entry appended later.
func (t *Transcript) Stamp(e map[string]any) {
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	e["at"] = math.Round(float64(now.Sub(t.Answered).Milliseconds())) / 1000
}

// AppendStamped adds entries Stamp stamped, in order, in one transaction.
// An append the database does not take is retried until it lands or the
// Writer's budget is spent (then its error is returned). A try whose
// commit answer was lost may have landed: a retry first looks for the
// entries in the transcript, so none is written twice.
func (t *Transcript) AppendStamped(ctx context.Context, entries []map[string]any) error {
	tries := 0
	return t.Writes.Do(ctx, "transcript", func(ctx context.Context) error {
		tries++
		return t.Store.Update(ctx, func(tx store.Tx) error {
			if tries > 1 {
				c, err := tx.GetCallForUpdate(ctx, t.OrgID, t.CallID)
				if err != nil {
					return err
				}
				if holds(c.Transcript, entries) {
					return nil
				}
			}
			return tx.AppendTranscript(ctx, t.OrgID, t.CallID, entries, model.Now())
		})
	})
}

// holds says whether entries are in transcript, one after another, as an
// append leaves them (the store's "seq" aside). Entries are compared as
// JSON: the stored ones were decoded from it. Each is stamped to the
// millisecond, so another append does not match by chance.
func holds(transcript, entries []map[string]any) bool {
	if len(entries) == 0 {
		return true
	}
	want, ok := entriesJSON(entries)
	if !ok {
		return false
	}
	have, _ := entriesJSON(transcript)
	for start := 0; start+len(want) <= len(have); start++ {
		i := 0
		for i < len(want) && have[start+i] != nil && bytes.Equal(have[start+i], want[i]) {
			i++
		}
		if i == len(want) {
			return true
		}
	}
	return false
}

// entriesJSON is each entry as JSON without its "seq" (nil, and ok false,
// for one that cannot be encoded).
func entriesJSON(entries []map[string]any) (out [][]byte, ok bool) {
	out, ok = make([][]byte, len(entries)), true
	for i, e := range entries {
		e = maps.Clone(e)
		delete(e, "seq")
		b, err := json.Marshal(e)
		if err != nil {
			ok = false
			continue
		}
		out[i] = b
	}
	return out, ok
}
