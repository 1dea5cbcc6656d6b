package storetest

import (
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// writerRaces is how many calls the writers race on, one at a time.
const writerRaces = 100

// callWriterTests check that the ways a call's row is written compose: a
// row-locked read-modify-write (GetCallForUpdate then UpdateCall), a
// column-scoped write (SetPostCallWebhookStatus, RenewLeases) and an append
// (AppendTranscript) can race on one call and every field each one wrote
// is there afterwards. Without the row lock, or with the webhook status
// written as a whole-row update, PostgreSQL loses fields here within a few
// races (SQLite's single writer serialises whole transactions, so it cannot).
var callWriterTests = []test{
	{"ConcurrentWritersKeepEveryField", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		owner := "node-a"
		for i := range writerRaces {
			c := newCall(t, b, b.org.ID, a.ID, leased(model.CallInProgress, owner, at(100)), func(c *model.Call) {
				c.StartedAt = ptr(at(1))
				c.PostCallWebhookURL = ptr("https://example.com/post")
			})
			start := make(chan struct{})
			errs := make(chan error, 5)
			var writers sync.WaitGroup
			race := func(fn func(tx store.Tx) error) {
				writers.Add(1)
				go func() {
					defer writers.Done()
					<-start
					errs <- b.st.Update(b.ctx, fn)
				}()
			}
			race(func(tx store.Tx) error { // the call ends
				cur, err := tx.GetCallForUpdate(b.ctx, b.org.ID, c.ID)
				if err != nil {
					return err
				}
				cur.Status, cur.EndedAt, cur.DurationSeconds = model.CallCompleted, ptr(at(61)), ptr(60)
				cur.HangupCause, cur.LeaseOwner, cur.LeaseExpiresAt = ptr("USER_ENDED"), nil, nil
				return tx.UpdateCall(b.ctx, &cur)
			})
			race(func(tx store.Tx) error { // the conversation's outcome
				cur, err := tx.GetCallForUpdate(b.ctx, b.org.ID, c.ID)
				if err != nil {
					return err
				}
				cur.Summary, cur.Metrics = ptr("A short call."), map[string]any{"llm_prompt_tokens": 12.0}
				return tx.UpdateCall(b.ctx, &cur)
			})
			race(func(tx store.Tx) error {
				return tx.SetPostCallWebhookStatus(b.ctx, b.org.ID, c.ID, model.WebhookSent)
			})
			race(func(tx store.Tx) error {
				return tx.AppendTranscript(b.ctx, b.org.ID, c.ID, []map[string]any{{"role": "user", "text": "bye"}}, at(60))
			})
			race(func(tx store.Tx) error {
				_, err := tx.RenewLeases(b.ctx, owner, []string{c.ID}, at(200))
				return err
			})
			close(start)
			writers.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("race %d: %v", i, err)
				}
			}
			got := getCall(t, b, b.org.ID, c.ID)
			switch {
			case got.Status != model.CallCompleted || got.EndedAt == nil || got.HangupCause == nil || got.DurationSeconds == nil:
				t.Fatalf("race %d: the end was lost: status %s endedAt %v", i, got.Status, got.EndedAt)
			case got.Summary == nil || got.Metrics["llm_prompt_tokens"] != 12.0:
				t.Fatalf("race %d: the outcome was lost: summary %v metrics %v", i, got.Summary, got.Metrics)
			case got.PostCallWebhookStatus == nil || *got.PostCallWebhookStatus != model.WebhookSent:
				t.Fatalf("race %d: the webhook status was lost: %v", i, got.PostCallWebhookStatus)
			case got.PostCallWebhookURL == nil:
				t.Fatalf("race %d: the webhook URL was lost", i)
			case len(got.Transcript) != 1:
				t.Fatalf("race %d: the transcript has %d entries", i, len(got.Transcript))
			case got.LeaseOwner != nil || got.LeaseExpiresAt != nil:
				t.Fatalf("race %d: an ended call holds a lease: %v until %v", i, got.LeaseOwner, got.LeaseExpiresAt)
			}
		}
	}},
	{"SetPostCallWebhookStatus", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		c := newCall(t, b, b.org.ID, a.ID, func(c *model.Call) { c.PostCallWebhookURL = ptr("https://example.com/post") })
		b.update(t, func(tx store.Tx) error {
			return tx.SetPostCallWebhookStatus(b.ctx, b.org.ID, c.ID, model.WebhookFailed)
		})
		got := getCall(t, b, b.org.ID, c.ID)
		if got.PostCallWebhookStatus == nil || *got.PostCallWebhookStatus != model.WebhookFailed || !got.UpdatedAt.Equal(c.UpdatedAt) {
			t.Fatalf("status %v updatedAt %v", got.PostCallWebhookStatus, got.UpdatedAt)
		}
		for _, k := range []struct{ org, id string }{{b.other.ID, c.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "nope"}} {
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				return tx.SetPostCallWebhookStatus(b.ctx, k.org, k.id, model.WebhookSent)
			}), store.ErrNotFound)
		}
	}},
	{"GetCallForUpdate", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		c := newCall(t, b, b.org.ID, a.ID)
		var got model.Call
		b.update(t, func(tx store.Tx) (err error) {
			got, err = tx.GetCallForUpdate(b.ctx, b.org.ID, c.ID)
			return err
		})
		wantEqual(t, getCall(t, b, b.org.ID, c.ID), got)
		for _, k := range []struct{ org, id string }{{b.other.ID, c.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "nope"}} {
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				_, err := tx.GetCallForUpdate(b.ctx, k.org, k.id)
				return err
			}), store.ErrNotFound)
		}
	}},
}
