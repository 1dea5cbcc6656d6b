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
