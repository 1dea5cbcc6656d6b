package campaign

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// dial places the campaign's due calls while it may: inside startAt–endAt,
// up to what the organization's lines, the campaign's concurrency and a
// pass's share allow; due recipients outside their calling window are
// parked until it opens instead. The gate (gate.go) decides each dial for
// good; what dial counts here only keeps it from trying dials the gate
// would refuse.
//
// It returns when the campaign's pace next allows a dial if the pace, not
// the lines or the list, is what stopped it (zero otherwise): the
// dispatcher looks again then.
func (d *Dispatcher) dial(ctx context.Context, c model.Campaign, now time.Time) (again time.Time) {
	if c.Counts.Pending == 0 || (c.StartAt != nil && now.Before(*c.StartAt)) || (c.EndAt != nil && !now.Before(*c.EndAt)) {
		return
	}
	var a model.Agent
	var free int
	err := d.Store.View(ctx, func(tx store.Tx) error {
		org, err := tx.GetOrg(ctx, c.OrgID)
		if err != nil {
			return err
		}
		live, err := tx.CountLiveCalls(ctx, c.OrgID)
		if err != nil {
			return err
		}
		free = min(Lines(org.ConcurrencyLimit, org.InboundReservePercent)-live,
			Concurrency(c.Config, org.ConcurrencyLimit)-c.Counts.InProgress, maxDialsPerPass)
		a, err = tx.GetAgent(ctx, c.OrgID, c.AgentID)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		d.halt(ctx, c, "its agent was deleted")
		return
	case err != nil:
		d.logErr(ctx, "read campaign's organization", err, "campaign_id", c.ID)
		return
	case a.Status != model.AgentActive:
		d.halt(ctx, c, "its agent is disabled")
		return
	}
	// The pace as the campaign stood at the pass's start (its nextDialAt
	// only moves forward, so this allows at least what the gate will): no
	// dial is tried only to be refused and undone, and a pass reads no more
	// due recipients than it may dial (at 1,000 a minute about 16, or one
	// when a freed line woke it, not a page of 250) until it meets
	// recipients to park, which it then reads by the page.
	if n, at := paced(c, now, free); n < free {
		free, again = n, at
	}
	if free <= 0 {
		return again
	}
	page := min(duePage, free)
	dialed, parked := 0, 0
	for dialed < free && parked < maxParksPerPass {
		asked := page
		due, err := store.Read(ctx, d.Store, func(tx store.Tx) ([]model.CampaignRecipient, error) {
			return tx.DueCampaignRecipients(ctx, c.OrgID, c.ID, now, asked)
		})
		if err != nil {
			d.logErr(ctx, "list due recipients", err, "campaign_id", c.ID)
			return
		}
		var parks []park
		progress := false
		stop := false
		for _, r := range due {
			if dialed >= free {
				break
			}
			if len(c.Config.CallingWindows) > 0 {
				zones := Zones(r, c.Config.Timezone)
				if !Open(c.Config.CallingWindows, zones, now) {
					next, ok := NextOpen(c.Config.CallingWindows, zones, now)
					if !ok {
						next = now.Add(24 * time.Hour) // no instant suits every zone: look again tomorrow
					}
					parks = append(parks, park{r, next})
					continue
				}
			}
			switch err := d.place(ctx, c, a, r, now); {
			case err == nil:
				dialed++
				progress = true
				d.Metrics.dials.WithLabelValues("placed").Inc()
			case errors.Is(err, errSuppressed):
				if d.suppress(ctx, r, now) {
					progress = true
				}
				d.Metrics.dials.WithLabelValues("suppressed").Inc()
			case errors.Is(err, errMoved):
				d.Metrics.dials.WithLabelValues("moved").Inc()
			case errors.Is(err, errNoLine), errors.Is(err, errFull), errors.Is(err, errPaced), errors.Is(err, errNotRunning):
				d.Metrics.dials.WithLabelValues(refusal(err)).Inc()
				stop = true
			default:
				d.logErr(ctx, "place campaign call", err, "campaign_id", c.ID, "recipient_id", r.ID)
				stop = true
			}
			if stop {
				break
			}
		}
		if len(parks) > 0 {
			if err := d.park(ctx, c, parks); err != nil {
				d.logErr(ctx, "park recipients outside their windows", err, "campaign_id", c.ID)
				return
			}
			parked += len(parks)
			d.Metrics.parked.Add(float64(len(parks)))
			progress = true
			page = duePage
		}
		if stop || !progress || len(due) < asked {
			return again
		}
	}
	return again
}

// paced is how many of n dials c's pace allows at now, and when it allows
// the one after them.
func paced(c model.Campaign, now time.Time, n int) (int, time.Time) {
	next := c.NextDialAt
	for i := range n {
		ok, after := Pace(next, now, c.Config.CallsPerMinute)
		if !ok {
			return i, PaceAllows(next, c.Config.CallsPerMinute)
		}
		next = after
	}
	return n, PaceAllows(next, c.Config.CallsPerMinute)
}

// place places one recipient's call, its recipient moved to in_progress
// in the same transaction by the gate.
func (d *Dispatcher) place(ctx context.Context, c model.Campaign, a model.Agent, r model.CampaignRecipient, now time.Time) error {
	turn := d.turns[c.ID]
	d.turns[c.ID] = turn + 1
	vars := maps.Clone(c.Config.Variables)
	if vars == nil {
		vars = map[string]any{}
	}
	maps.Copy(vars, r.Variables)
	cl := call.Outbound(a, CallerID(c.Config.FromNumbers, r.ToNumber, turn), r.ToNumber, vars, nil)
	cl.CampaignID = &c.ID
	return d.Calls.PlaceRecorded(ctx, &cl, false, gate(ctx, now, r))
}

// refusal names a gate's refusal for the dials metric.
func refusal(err error) string {
	switch {
	case errors.Is(err, errNoLine):
		return "no_line"
	case errors.Is(err, errFull):
		return "at_concurrency"
	case errors.Is(err, errPaced):
		return "paced"
	default:
		return "not_running"
	}
}

// park is a due recipient outside its calling window and when it opens.
type park struct {
	r    model.CampaignRecipient
	next time.Time
}

// park pushes recipients outside their windows to the windows' opening.
func (d *Dispatcher) park(ctx context.Context, c model.Campaign, parks []park) error {
	changes := make([]recipientChange, len(parks))
	for i, p := range parks {
		after := p.r
		next := p.next.UTC()
		after.NextAttemptAt = &next
		changes[i] = recipientChange{p.r, after}
	}
	_, err := d.changeRecipients(ctx, c.OrgID, c.ID, changes)
	return err
}

// suppress marks a recipient whose number was suppressed after it was
// added: it is never dialed.
func (d *Dispatcher) suppress(ctx context.Context, r model.CampaignRecipient, now time.Time) bool {
	after := r
	after.Status, after.NextAttemptAt, after.UpdatedAt = model.RecipientSuppressed, nil, now.UTC()
	moved, err := d.changeRecipients(ctx, r.OrgID, r.CampaignID, []recipientChange{{r, after}})
	if err != nil {
		d.logErr(ctx, "mark recipient suppressed", err, "recipient_id", r.ID)
	}
	return moved > 0
}

// recipientChange is one recipient as read and as it is to become.
type recipientChange struct{ before, after model.CampaignRecipient }

// changeRecipients writes changes in one transaction holding the
// campaign's row (every recipient write but a dial's holds it), each
// guarded by ChangeRecipient, and says how many landed.
func (d *Dispatcher) changeRecipients(ctx context.Context, orgID, campaignID string, changes []recipientChange) (int, error) {
	var moved int
	err := d.Store.Update(ctx, func(tx store.Tx) error {
		moved = 0
		if _, err := tx.GetCampaignForUpdate(ctx, orgID, campaignID); err != nil {
			return err
		}
		for _, ch := range changes {
			ok, err := tx.ChangeRecipient(ctx, &ch.before, &ch.after)
			if err != nil {
				return err
			}
			if ok {
				moved++
			}
		}
		return nil
	})
	return moved, err
}

// halt pauses a running campaign that cannot dial (its agent is gone or
// disabled): nobody is called by an agent the team turned off, and
// resuming once the agent is back goes on where it stopped.
func (d *Dispatcher) halt(ctx context.Context, c model.Campaign, why string) {
	var paused *model.Campaign // nil: it was no longer running
	err := d.Store.Update(ctx, func(tx store.Tx) error {
		paused = nil
		cur, err := tx.GetCampaignForUpdate(ctx, c.OrgID, c.ID)
		if err != nil || cur.Status != model.CampaignRunning {
			return err
		}
		cur.Status, cur.UpdatedAt = model.CampaignPaused, d.Now().UTC()
		paused = &cur
		return tx.UpdateCampaign(ctx, &cur)
	})
	if err != nil {
		d.logErr(ctx, "pause campaign", err, "campaign_id", c.ID)
		return
	}
	if paused != nil {
		logCampaign(ctx, d.Logger, slog.LevelWarn, *paused, "paused", slog.String("reason", why))
	}
}
