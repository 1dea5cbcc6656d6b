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
	// Answered is when the call was answered: entries' "at" and "endAt"
	// count from it.
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

// Append adds e at the end of the transcript, stamped as Stamp stamps
// it; "seq" is set by the store.
func (t *Transcript) Append(ctx context.Context, e map[string]any) error {
	t.Stamp(e)
	return t.AppendStamped(ctx, []map[string]any{e})
}

// Stamp sets e's "at" and "endAt" to now: an entry that takes no time of
// its own (a tool's result, a flow's step), or appended later.
func (t *Transcript) Stamp(e map[string]any) { t.StampSpan(e, time.Time{}, time.Time{}) }

// StampSpan stamps an entry that took time: "at" is when it began (the
// caller's first word, the agent's first audio on the line) and "endAt"
// when it ended (the caller's last word, the agent's audio played out);
// zero is now. Both are seconds since the answer, to the millisecond, so
// "at" is where the recording plays the line from; "at" is never before
// the answer nor after "endAt". Entries land in the order they are made,
// which is not always the order of either time (a caller heard while the
// agent could not be interrupted is written after the agent's line).
func (t *Transcript) StampSpan(e map[string]any, began, ended time.Time) {
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	if ended.IsZero() {
		ended = now
	}
	end := t.since(ended)
	at := end
	if !began.IsZero() {
		at = min(max(t.since(began), 0), end)
	}
	e["at"], e["endAt"] = at, end
}

// since is when as seconds since the answer, to the millisecond.
func (t *Transcript) since(when time.Time) float64 {
	return math.Round(float64(when.Sub(t.Answered).Milliseconds())) / 1000
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
