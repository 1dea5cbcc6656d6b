package eval

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// CompletedEvent is test_run.completed's body: the run as GET
// /test-suites/{id}/runs/{runId} answers it, attempts included.
type CompletedEvent struct {
	Event   string    `json:"event"`
	TestRun RunRecord `json:"testRun"`
}

// CompletedBody is the JSON body of test_run.completed for run (read with
// its attempts).
func CompletedBody(run model.TestRun) ([]byte, error) {
	return json.Marshal(CompletedEvent{Event: webhook.EventTestRunCompleted, TestRun: NewRunRecord(run, true)})
}

// deliver sends test_run.completed for an ended run that has somewhere to
// send it, in the background, and records how it went. A status the
// database does not take is retried (persist), so the webhook is not sent
// twice; a crash before the record, or a status given up, leaves it
// pending: sweepWebhooks sends it again.
func (r *Runner) deliver(run model.TestRun) {
	if r == nil || r.Webhooks == nil || run.WebhookURL == nil || run.WebhookStatus != nil {
		return
	}
	r.init()
	r.mu.Lock()
	if r.inFlight[run.ID] {
		r.mu.Unlock()
		return
	}
	r.inFlight[run.ID] = true
	base, writes := r.base, r.statusWrites
	r.sends.Add(1)
	r.mu.Unlock()
	if base == nil {
		base = context.Background()
	}
	go func() {
		defer r.sends.Done()
		defer func() {
			r.mu.Lock()
			delete(r.inFlight, run.ID)
			r.mu.Unlock()
		}()
		ctx := context.WithoutCancel(base)
		log := r.Logger.With("test_run_id", run.ID, "org_id", run.OrgID)
		status := model.WebhookFailed
		secret, err := r.Secret(ctx, run.OrgID)
		if err != nil {
			log.Error("test_run.completed: signing secret", "err", err)
		}
		body, err := CompletedBody(run)
		if err == nil {
			res := r.Webhooks.Deliver(ctx, webhook.Delivery{Event: webhook.EventTestRunCompleted, URL: *run.WebhookURL,
				Secret: secret, Body: body, Timeout: webhook.PostCallTimeout})
			status = res.Status()
			if res.Err != nil {
				log.Warn("test_run.completed not delivered", "err", res.Err)
			}
		}
		err = r.update(writes, "test run webhook status", func(ctx context.Context, tx store.Tx) error {
			return tx.SetTestRunWebhookStatus(ctx, run.OrgID, run.ID, status)
		})
		if err != nil && !errors.Is(err, store.ErrNotFound) { // not found: the suite was deleted
			log.Error("test_run.completed: status not recorded; the sweep sends it again", "status", status, "err", err)
		}
	}()
}

// sweepWebhooks delivers what a stopped server left pending.
func (r *Runner) sweepWebhooks(ctx context.Context) {
	runs, err := store.Read(ctx, r.Store, func(tx store.Tx) ([]model.TestRun, error) { return tx.PendingTestRunWebhooks(ctx, 50) })
	if err != nil {
		if ctx.Err() == nil {
			r.Logger.Error("test_run.completed: pending deliveries", "err", err)
		}
		return
	}
	for _, run := range runs {
		r.deliver(run) // skips what is already being sent
	}
}

// hangUp ends the calls of attempts a cancel cut: the simulated caller's
// leg (the agent's leg ends with it), or its place in the queue.
func (r *Runner) hangUp(ctx context.Context, cut []model.TestAttempt) {
	if r == nil || r.Calls == nil {
		return
	}
	for _, a := range cut {
		if a.CallID == nil {
			continue
		}
		_, err := r.Calls.Cancel(ctx, a.OrgID, *a.CallID)
		var conflict *invalid.Conflict
		if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.As(err, &conflict) {
			r.Logger.Error("test run canceled: hang up an attempt's call", "call_id", *a.CallID, "err", err)
		}
	}
}
