package call

import (
	"context"
	"math"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Transcript appends to a running call's transcript: the one way code
// outside the queue writes to a call's record. It cannot change any other
// field, and appends from several writers all land (the store locks the
// row while it appends and numbers each entry's seq in landing order).
type Transcript struct {
	Store         store.Store
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
func (t *Transcript) AppendStamped(ctx context.Context, entries []map[string]any) error {
	return t.Store.Update(ctx, func(tx store.Tx) error {
		return tx.AppendTranscript(ctx, t.OrgID, t.CallID, entries, model.Now())
	})
}
