package campaign

import (
	"context"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// settle records what happened since the last pass: the outcome of every
// in_progress recipient whose call ended (completed, failed, or pending
// again after the retry delay; a paused campaign's too), and, while it
// runs, the expiry of what is unfinished once endAt has passed and the
// campaign's completion once nothing is left to dial or live. It returns the campaign as it now stands. The calls'
// ends are read from the calls themselves, whichever server or path ended
// them (worker, reaper, cancel), so no end can be missed.
func (d *Dispatcher) settle(ctx context.Context, c model.Campaign, now time.Time) (model.Campaign, error) {
	live, err := store.Read(ctx, d.Store, func(tx store.Tx) ([]store.RecipientCall, error) {
		return tx.LiveRecipients(ctx, c.OrgID, c.ID)
	})
	if err != nil {
		return c, err
	}
	var ended []store.RecipientCall
	for _, r := range live {
		if call.IsFinal(r.CallStatus) {
			ended = append(ended, r)
		}
	}
	expire := c.EndAt != nil && !now.Before(*c.EndAt) && c.Counts.Pending > 0
	done := c.Counts.Pending == 0 && c.Counts.InProgress == 0
	if len(ended) == 0 && !expire && !done {
		return c, nil
	}
	var outcomes []outcome
	err = d.Store.Update(ctx, func(tx store.Tx) error {
		outcomes = outcomes[:0]
		cur, err := tx.GetCampaignForUpdate(ctx, c.OrgID, c.ID)
		if err != nil {
			return err
		}
		if cur.Status != model.CampaignRunning && cur.Status != model.CampaignPaused {
			c = cur
			return nil
		}
		for _, r := range ended {
			o, err := settleOne(ctx, tx, cur.Config, r, now)
			if err != nil {
				return err
			}
			if o.status != "" {
				outcomes = append(outcomes, o)
			}
		}
		if cur.Status == model.CampaignPaused { // it expires and completes once resumed
			c = cur
			return nil
		}
		if cur.EndAt != nil && !now.Before(*cur.EndAt) {
			n, err := tx.FinishRecipients(ctx, c.OrgID, c.ID, []string{model.RecipientPending}, model.RecipientExpired, now)
			if err != nil {
				return err
			}
			if n > 0 {
				outcomes = append(outcomes, outcome{status: model.RecipientExpired, n: n})
			}
		}
		if cur, err = tx.GetCampaign(ctx, c.OrgID, c.ID); err != nil {
			return err
		}
		if cur.Counts.Pending == 0 && cur.Counts.InProgress == 0 {
			at := now.UTC()
			cur.Status, cur.CompletedAt, cur.UpdatedAt = model.CampaignCompleted, &at, at
			if err := tx.UpdateCampaign(ctx, &cur); err != nil {
				return err
			}
		}
		c = cur
		return nil
	})
	if err != nil {
		return c, err
	}
	for _, o := range outcomes {
		d.Metrics.outcomes.WithLabelValues(o.status, o.cause).Add(float64(o.n))
	}
	if c.Status == model.CampaignCompleted {
		d.Metrics.finished.WithLabelValues(model.CampaignCompleted).Inc()
		logCampaign(ctx, d.Logger, slog.LevelInfo, c, "completed")
	}
	return c, nil
}

// outcome is what happened to n recipients, for the metrics: their new
// status ("retry" for pending again) and the retry outcome of the call.
type outcome struct {
	status, cause string
	n             int
}

// settleOne moves recipient r, whose last call ended, on by its outcome.
func settleOne(ctx context.Context, tx store.Tx, cfg model.CampaignConfig, r store.RecipientCall, now time.Time) (outcome, error) {
	before := r.CampaignRecipient
	after := before
	// The retry delay runs from when the end is learned, on the
	// dispatcher's clock: no sooner than the delay after the call ended
	// (by at most a tick more), and one clock for every rule.
	after.Status, after.NextAttemptAt = Next(cfg, before, r.CallStatus, r.HangupCause, now)
	after.LastHangupCause, after.UpdatedAt = r.HangupCause, now.UTC()
	ok, err := tx.ChangeRecipient(ctx, &before, &after)
	if err != nil || !ok {
		return outcome{}, err
	}
	status := after.Status
	if status == model.RecipientPending {
		status = "retry"
	}
	return outcome{status: status, cause: RetryOutcome(r.CallStatus, r.HangupCause), n: 1}, nil
}
