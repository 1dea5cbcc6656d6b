package callqueue

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// sweepEvery is how often ended calls with an undelivered post-call webhook
// are looked for; orphanAfter is how long after its end a pending delivery
// is taken as orphaned by a crash (well past the 5 s delivery timeout).
const (
	sweepEvery  = 10 * time.Second
	orphanAfter = 30 * time.Second
	sweepBatch  = 50
)

// deliver sends c's post-call webhook in the background, once, and records
// its status. c is the record as committed with its end, so the webhook
// carries exactly what is stored. Calls without a URL were already marked
// skipped.
func (q *Queue) deliver(c model.Call) {
	if c.PostCallWebhookURL == nil || c.PostCallWebhookStatus != nil {
		return
	}
	q.mu.Lock()
	if q.inFlight[c.ID] {
		q.mu.Unlock()
		return
	}
	q.inFlight[c.ID] = true
	q.sends.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.sends.Done()
		defer func() {
			q.mu.Lock()
			delete(q.inFlight, c.ID)
			q.mu.Unlock()
		}()
		ctx := context.WithoutCancel(q.base)
		secret, err := q.o.Secret(ctx, c.OrgID)
		if err != nil {
			q.o.Logger.Error("post-call webhook: signing secret", "call_id", c.ID, "err", err)
		}
		body, err := call.PostCallBody(c)
		status := model.WebhookFailed
		if err == nil {
			status = q.o.Webhooks.PostCall(ctx, *c.PostCallWebhookURL, secret, body)
		}
		// Retried, or the sweep would send the webhook again.
		err = q.o.Writes.Update(q.writes, "post-call webhook status", func(ctx context.Context, tx store.Tx) error {
			return tx.SetPostCallWebhookStatus(ctx, c.OrgID, c.ID, status)
		})
		if err != nil {
			q.o.Logger.Error("post-call webhook: record status; the sweep will deliver it again", "call_id", c.ID, "status", status, "err", err)
		}
	}()
}

// sweepWebhooks delivers post-call webhooks that a crash left undelivered.
func (q *Queue) sweepWebhooks(ctx context.Context) {
	pending, err := store.Read(ctx, q.o.Store, func(tx store.Tx) ([]model.Call, error) {
		return tx.PendingPostCallWebhooks(ctx, sweepBatch)
	})
	if err != nil {
		q.logErr(ctx, "find pending post-call webhooks", err)
		return
	}
	cutoff := time.Now().Add(-orphanAfter)
	for _, c := range pending {
		if c.EndedAt != nil && c.EndedAt.Before(cutoff) {
			q.deliver(c)
		}
	}
}
