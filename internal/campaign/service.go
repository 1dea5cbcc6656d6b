package campaign

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Service keeps campaigns and their recipients: the API's and the
// dashboard's way in. Every write that changes a campaign holds its row
// (GetCampaignForUpdate) in the same transaction, so a transition, an
// upload and the dispatcher never overwrite one another.
type Service struct {
	Store store.Store
	// Wake, when set, tells the dispatcher there may be work: a campaign
	// started or resumed, recipients added, a campaign canceled (its
	// campaign_completed delivery). Called after the commit.
	Wake func()
	// Logger gets a line for each campaign started, paused, resumed or
	// canceled (default slog.Default()).
	Logger *slog.Logger
}

// Added is what POST /campaigns/{id}/recipients did: recipients stored
// (suppressed ones included), numbers left out because they were in the
// body twice or the campaign held them already, and stored ones whose
// number is suppressed.
type Added struct {
	Added      int `json:"added"`
	Duplicates int `json:"duplicates"`
	Suppressed int `json:"suppressed"`
}

// suppressedChunk bounds the numbers asked about in one query: a list of
// 100,000 is asked in parts, under every engine's parameter limit.
const suppressedChunk = 5000

func (s *Service) wake() {
	if s.Wake != nil {
		s.Wake()
	}
}

// Create stores a new draft campaign.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (model.Campaign, error) {
	now := model.Now()
	c := New(orgID, now)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if err := s.apply(ctx, tx, &c, &in, true, now); err != nil {
			return err
		}
		return tx.CreateCampaign(ctx, &c)
	})
	if err != nil {
		return model.Campaign{}, err
	}
	return c, nil
}

// apply checks in, and the agent it names in c's organization, and writes
// it onto c; c is only good when it answers nil.
func (s *Service) apply(ctx context.Context, tx store.Tx, c *model.Campaign, in *Input, creating bool, now time.Time) error {
	var l invalid.List
	if err := checkAgent(ctx, tx, c.OrgID, in.AgentID, &l); err != nil {
		return err
	}
	// Apply's checks run whatever the agent's, so one answer names every
	// broken field; c is thrown away when any is.
	in.Apply(c, creating, now, &l)
	return l.Err()
}

// checkAgent adds agentId to l when it is a UUID that names no agent of
// the organization. A malformed one is Apply's to name (and never reaches
// the database: PostgreSQL would abort the transaction on it).
func checkAgent(ctx context.Context, tx store.Tx, orgID string, f opt.Field[string], l *invalid.List) error {
	if !f.Present() || !model.IsUUID(f.V) {
		return nil
	}
	_, err := tx.GetAgent(ctx, orgID, f.V)
	if errors.Is(err, store.ErrNotFound) {
		l.Add("agentId", "names no agent in this organization")
		return nil
	}
	return err
}

// Get returns one campaign.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.Campaign, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.Campaign, error) { return tx.GetCampaign(ctx, orgID, id) })
}

// List returns a page of campaigns and how many match the filter.
func (s *Service) List(ctx context.Context, orgID string, f store.CampaignFilter) ([]model.Campaign, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.Campaign, int, error) { return tx.ListCampaigns(ctx, orgID, f) })
}

// Update applies a partial update to a draft or paused campaign; a
// running or finished one is a conflict (pause it first).
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (model.Campaign, error) {
	var c model.Campaign
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if c, err = tx.GetCampaignForUpdate(ctx, orgID, id); err != nil {
			return err
		}
		if c.Status != model.CampaignDraft && c.Status != model.CampaignPaused {
			return &invalid.Conflict{Message: fmt.Sprintf("campaign is %s; only a draft or paused campaign can be changed (pause it first)", c.Status)}
		}
		if err := s.apply(ctx, tx, &c, &in, false, model.Now()); err != nil {
			return err
		}
		return tx.UpdateCampaign(ctx, &c)
	})
	if err != nil {
		return model.Campaign{}, err
	}
	return c, nil
}

// Delete removes a campaign and its recipients; a running or paused one is
// a conflict (cancel it first). Its calls keep their campaignId.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		c, err := tx.GetCampaignForUpdate(ctx, orgID, id)
		if err != nil {
			return err
		}
		if c.Status == model.CampaignRunning || c.Status == model.CampaignPaused {
			return &invalid.Conflict{Message: fmt.Sprintf("campaign is %s; cancel it before deleting it", c.Status)}
		}
		return tx.DeleteCampaign(ctx, orgID, id)
	})
}

// AddRecipients stores a checked batch, all or nothing: numbers the
// campaign holds already are left out (counted in Duplicates, with the
// body's own repeats), and numbers the organization suppresses are stored
// with status suppressed. A completed or canceled campaign takes none.
func (s *Service) AddRecipients(ctx context.Context, orgID, id string, b Batch) (Added, error) {
	var out Added
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		c, err := tx.GetCampaignForUpdate(ctx, orgID, id)
		if err != nil {
			return err
		}
		if c.Status == model.CampaignCompleted || c.Status == model.CampaignCanceled {
			return &invalid.Conflict{Message: fmt.Sprintf("campaign is %s; it takes no more recipients", c.Status)}
		}
		rs := b.Recipients
		if err := markSuppressed(ctx, tx, orgID, rs); err != nil {
			return err
		}
		now := model.Now()
		for i := range rs {
			r := &rs[i]
			r.OrgID, r.CampaignID = orgID, id
			if r.CreatedAt.IsZero() {
				r.CreatedAt = now
			}
			if r.UpdatedAt.IsZero() {
				r.UpdatedAt = now
			}
			if r.Variables == nil {
				r.Variables = map[string]any{}
			}
		}
		added, suppressed, err := tx.AddCampaignRecipients(ctx, orgID, id, rs)
		if err != nil {
			return err
		}
		out = Added{Added: added, Duplicates: b.Duplicates + len(rs) - added, Suppressed: suppressed}
		return nil
	})
	if err != nil {
		return Added{}, err
	}
	if out.Added > 0 {
		s.wake()
	}
	return out, nil
}

// markSuppressed gives every recipient whose number the organization
// suppresses the status suppressed, and the others pending.
func markSuppressed(ctx context.Context, tx store.Tx, orgID string, rs []model.CampaignRecipient) error {
	for start := 0; start < len(rs); start += suppressedChunk {
		part := rs[start:min(start+suppressedChunk, len(rs))]
		numbers := make([]string, len(part))
		for i, r := range part {
			numbers[i] = r.ToNumber
		}
		suppressed, err := tx.SuppressedNumbers(ctx, orgID, numbers)
		if err != nil {
			return err
		}
		for i := range part {
			part[i].Status = model.RecipientPending
			if suppressed[part[i].ToNumber] {
				part[i].Status = model.RecipientSuppressed
			}
		}
	}
	return nil
}

// ListRecipients returns a page of the campaign's recipients, in the order
// they were added (the page's direction reverses it).
func (s *Service) ListRecipients(ctx context.Context, orgID, id string, f store.RecipientFilter) ([]model.CampaignRecipient, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.CampaignRecipient, int, error) {
		if _, err := tx.GetCampaign(ctx, orgID, id); err != nil {
			return nil, 0, err
		}
		return tx.ListCampaignRecipients(ctx, orgID, id, f)
	})
}
