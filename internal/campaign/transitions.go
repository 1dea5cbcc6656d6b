package campaign

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// A transition is one of the moves the API asks for: the statuses it
// leaves, the one it reaches, and what else it writes on the way (under
// the campaign's row lock, in the same transaction).
type transition struct {
	verb string
	from []string
	to   string
	// also writes the rest: a start's startedAt, a cancel's recipients.
	also func(ctx context.Context, tx store.Tx, c *model.Campaign, now time.Time) error
	// wakes says whether the dispatcher has work after it.
	wakes bool
}

var (
	startMove = transition{verb: "started", from: []string{model.CampaignDraft}, to: model.CampaignRunning, wakes: true,
		also: func(_ context.Context, _ store.Tx, c *model.Campaign, now time.Time) error {
			if c.Counts.Total == 0 {
				return &invalid.Conflict{Message: "campaign has no recipients; add some before starting it"}
			}
			c.StartedAt = &now
			return nil
		}}
	pauseMove  = transition{verb: "paused", from: []string{model.CampaignRunning}, to: model.CampaignPaused}
	resumeMove = transition{verb: "resumed", from: []string{model.CampaignPaused}, to: model.CampaignRunning, wakes: true}
	// A cancel ends the recipients not finished; calls already live run to
	// their end (the dispatcher finds their recipients final and leaves them).
	cancelMove = transition{verb: "canceled", to: model.CampaignCanceled, wakes: true,
		from: []string{model.CampaignDraft, model.CampaignRunning, model.CampaignPaused},
		also: func(ctx context.Context, tx store.Tx, c *model.Campaign, now time.Time) error {
			_, err := tx.FinishRecipients(ctx, c.OrgID, c.ID,
				[]string{model.RecipientPending, model.RecipientInProgress}, model.RecipientCanceled, now)
			c.CompletedAt = &now
			return err
		}}
)

// Start moves a draft campaign with recipients to running.
func (s *Service) Start(ctx context.Context, orgID, id string) (model.Campaign, error) {
	return s.move(ctx, orgID, id, startMove)
}

// Pause stops a running campaign dialing; live calls run to their end.
func (s *Service) Pause(ctx context.Context, orgID, id string) (model.Campaign, error) {
	return s.move(ctx, orgID, id, pauseMove)
}

// Resume lets a paused campaign dial again.
func (s *Service) Resume(ctx context.Context, orgID, id string) (model.Campaign, error) {
	return s.move(ctx, orgID, id, resumeMove)
}

// Cancel ends an unfinished campaign and its recipients not finished.
func (s *Service) Cancel(ctx context.Context, orgID, id string) (model.Campaign, error) {
	return s.move(ctx, orgID, id, cancelMove)
}

// move makes transition m on the campaign, or answers a conflict naming
// the status it is in.
func (s *Service) move(ctx context.Context, orgID, id string, m transition) (model.Campaign, error) {
	var c model.Campaign
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if c, err = tx.GetCampaignForUpdate(ctx, orgID, id); err != nil {
			return err
		}
		if !slices.Contains(m.from, c.Status) {
			return &invalid.Conflict{Message: fmt.Sprintf("campaign is %s; only a %s campaign can be %s",
				c.Status, orList(m.from), m.verb)}
		}
		now := model.Now()
		if m.also != nil {
			if err := m.also(ctx, tx, &c, now); err != nil {
				return err
			}
		}
		c.Status, c.UpdatedAt = m.to, now
		if err := tx.UpdateCampaign(ctx, &c); err != nil {
			return err
		}
		// Read back: the counts moved with the recipients.
		c, err = tx.GetCampaign(ctx, orgID, id)
		return err
	})
	if err != nil {
		return model.Campaign{}, err
	}
	logCampaign(ctx, s.logger(), slog.LevelInfo, c, m.verb)
	if m.wakes {
		s.wake()
	}
	return c, nil
}

// orList is "draft", "draft or paused", "draft, running or paused".
func orList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, v := range s[1 : len(s)-1] {
		out += ", " + v
	}
	return out + " or " + s[len(s)-1]
}
