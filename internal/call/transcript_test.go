package call

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// TestAppendSurvivesFaults: an entry appended while the database refuses
// the write (busy, an I/O error) lands once it takes it, and one whose
// answer was lost after it committed is not appended twice, even behind
// another writer's entry.
func TestAppendSurvivesFaults(t *testing.T) {
	ctx := t.Context()
	fs := storefault.Wrap(sqlitetest.Open(t))
	now := model.Now()
	o := model.Organization{ID: model.NewID(), Name: "acme", ConcurrencyLimit: 1, CreatedAt: now, UpdatedAt: now}
	a := model.Agent{ID: model.NewID(), OrgID: o.ID, Name: "Front desk", Status: model.AgentActive, Mode: model.ModeSinglePrompt, CreatedAt: now, UpdatedAt: now}
	c := NewInbound(a, nil, "+15550001111", "+15550002222", &a.ID)
	if err := fs.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &o); err != nil {
			return err
		}
		if err := tx.CreateAgent(ctx, &a); err != nil {
			return err
		}
		return tx.CreateCall(ctx, &c)
	}); err != nil {
		t.Fatal(err)
	}
	tr := NewTranscript(fs, c, time.Now())
	entry := func(text string) map[string]any {
		return map[string]any{"role": "tool", "type": "tool_call", "text": text}
	}

	fs.Inject(storefault.Rule{Op: "AppendTranscript", Times: 1, Err: storefault.Busy})
	fs.Inject(storefault.Rule{Op: "AppendTranscript", Times: 1, Err: storefault.IOError})
	if err := tr.Append(ctx, entry("refused twice")); err != nil {
		t.Fatal(err)
	}
	// The lost answer: the entry lands, another writer appends behind it,
	// and only then is the append tried again.
	fs.Inject(storefault.Rule{Op: "AppendTranscript", Times: 1, Err: storefault.Refused, LoseAck: true})
	other := NewTranscript(fs, c, time.Now())
	first := true
	lost := &Transcript{Store: lostAnswer{fs, func() {
		if first {
			first = false
			if err := other.Append(context.Background(), entry("another writer")); err != nil {
				t.Error(err)
			}
		}
	}}, OrgID: c.OrgID, CallID: c.ID, Answered: time.Now()}
	if err := lost.Append(ctx, entry("answer lost")); err != nil {
		t.Fatal(err)
	}
	got, err := store.Read(ctx, fs, func(tx store.Tx) (model.Call, error) { return tx.GetCall(ctx, c.OrgID, c.ID) })
	if err != nil {
		t.Fatal(err)
	}
	var texts []any
	for _, e := range got.Transcript {
		texts = append(texts, e["text"])
	}
	if want := []any{"refused twice", "answer lost", "another writer"}; !slices.Equal(texts, want) {
		t.Errorf("transcript %v, want %v", texts, want)
	}
}

// lostAnswer runs after once each failed Update, before it is retried.
type lostAnswer struct {
	*storefault.Store
	after func()
}

func (l lostAnswer) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := l.Store.Update(ctx, fn)
	if err != nil {
		l.after()
	}
	return err
}

// TestStampSpan: "at" is when the entry began and "endAt" when it ended,
// in seconds since the answer to the millisecond; a begin before the
// answer is the answer, one after the end is the end; none is now.
func TestStampSpan(t *testing.T) {
	answered := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := answered.Add(7250 * time.Millisecond)
	tr := &Transcript{Answered: answered, Now: func() time.Time { return now }}
	for _, tc := range []struct {
		name         string
		began, ended time.Time
		at, end      float64
	}{
		{"began earlier", answered.Add(4123456 * time.Microsecond), time.Time{}, 4.123, 7.25},
		{"ended earlier", answered.Add(4 * time.Second), answered.Add(5500 * time.Millisecond), 4, 5.5},
		{"no begin", time.Time{}, time.Time{}, 7.25, 7.25},
		{"before the answer", answered.Add(-time.Second), time.Time{}, 0, 7.25},
		{"after the end", answered.Add(6 * time.Second), answered.Add(5 * time.Second), 5, 5},
	} {
		e := map[string]any{}
		tr.StampSpan(e, tc.began, tc.ended)
		if e["at"] != tc.at || e["endAt"] != tc.end {
			t.Errorf("%s: at %v endAt %v, want %v %v", tc.name, e["at"], e["endAt"], tc.at, tc.end)
		}
	}
	e := map[string]any{}
	tr.Stamp(e)
	if e["at"] != 7.25 || e["endAt"] != 7.25 {
		t.Errorf("Stamp: at %v endAt %v", e["at"], e["endAt"])
	}
}
