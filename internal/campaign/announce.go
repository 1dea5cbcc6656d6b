package campaign

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// announce delivers campaign_completed for a finished campaign that owes
// it, once, in the background: the server holding the campaign's dispatch
// sends it and records how it went (sent or failed; a canceled campaign
// owes none, and is marked skipped). A crash before the record sends it
// again from whichever server holds the campaign next (receivers use the
// campaign id to drop a repeat).
func (d *Dispatcher) announce(ctx context.Context, c model.Campaign) {
	if c.WebhookStatus != nil {
		return
	}
	if c.Config.WebhookURL == nil || c.Status != model.CampaignCompleted {
		d.setWebhookStatus(ctx, c, model.WebhookSkipped)
		return
	}
	if !d.hold(ctx, c, d.Now()) {
		return
	}
	d.mu.Lock()
	if d.sending[c.ID] {
		d.mu.Unlock()
		return
	}
	d.sending[c.ID] = true
	d.sends.Add(1)
	d.mu.Unlock()
	go func() {
		defer d.sends.Done()
		defer func() {
			d.mu.Lock()
			delete(d.sending, c.ID)
			d.mu.Unlock()
		}()
		// The delivery finishes even when the server is stopping: its
		// status must be recorded, or it is sent twice.
		ctx := context.WithoutCancel(ctx)
		secret, err := d.Secret(ctx, c.OrgID)
		if err != nil {
			d.logErr(ctx, "read the organization's webhook secret", err, "campaign_id", c.ID)
			return
		}
		body, err := CompletedBody(c)
		if err != nil {
			d.logErr(ctx, "encode campaign_completed", err, "campaign_id", c.ID)
			return
		}
		res := d.Webhooks.Deliver(ctx, webhook.Delivery{Event: EventCompleted, URL: *c.Config.WebhookURL, Secret: secret, Body: body})
		d.setWebhookStatus(ctx, c, res.Status())
	}()
}

// setWebhookStatus records how campaign_completed went, unless it already is.
func (d *Dispatcher) setWebhookStatus(ctx context.Context, c model.Campaign, status string) {
	err := d.Store.Update(ctx, func(tx store.Tx) error {
		cur, err := tx.GetCampaignForUpdate(ctx, c.OrgID, c.ID)
		if err != nil || cur.WebhookStatus != nil {
			return err
		}
		cur.WebhookStatus = &status
		return tx.UpdateCampaign(ctx, &cur)
	})
	if err != nil {
		d.logErr(ctx, "record campaign_completed delivery", err, "campaign_id", c.ID)
	}
}
