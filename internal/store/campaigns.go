package store

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Campaigns persists campaigns, their recipients and the organization's
// do-not-call list. A campaign's counts are kept by the store: every
// method that adds recipients or changes a recipient's status adjusts
// them in the same transaction, and nothing else writes them.
type Campaigns interface {
	CreateCampaign(ctx context.Context, c *model.Campaign) error
	GetCampaign(ctx context.Context, orgID, id string) (model.Campaign, error)
	// GetCampaignForUpdate reads a campaign to change it, its row held
	// until the transaction ends (PostgreSQL: FOR UPDATE). Every write of
	// a campaign's settings, status or recipients' statuses but a dial
	// (ClaimRecipient, under the organization's lock) holds it.
	GetCampaignForUpdate(ctx context.Context, orgID, id string) (model.Campaign, error)
	ListCampaigns(ctx context.Context, orgID string, f CampaignFilter) ([]model.Campaign, int, error)
	// UpdateCampaign writes every field of c but its counts (found by
	// OrgID and ID); c must have been read with GetCampaignForUpdate in
	// the same transaction.
	UpdateCampaign(ctx context.Context, c *model.Campaign) error
	// DeleteCampaign deletes the campaign and its recipients; its calls
	// keep their campaignId.
	DeleteCampaign(ctx context.Context, orgID, id string) error
	// ActiveCampaigns lists, across organizations, the campaigns a
	// dispatcher has work in: running ones, paused ones with recipients
	// in progress (their calls' outcomes), and finished ones whose
	// campaign_completed delivery is owed (WebhookStatus nil, webhookUrl
	// set). At most n, oldest first.
	ActiveCampaigns(ctx context.Context, n int) ([]model.Campaign, error)
	// ClaimCampaignDispatch takes or renews owner's hold on planning the
	// campaign's dials until until, when it is free, owner's, or its
	// holder's hold ended before now. false when another holds it.
	ClaimCampaignDispatch(ctx context.Context, orgID, id, owner string, now, until time.Time) (bool, error)
	// PaceCampaign sets the campaign's NextDialAt (the one field a dial
	// writes), leaving the rest of the row alone.
	PaceCampaign(ctx context.Context, orgID, id string, next time.Time) error

	// AddCampaignRecipients stores the recipients whose number the
	// campaign does not hold yet (each with its Status: pending or
	// suppressed) and leaves the others; it returns how many it stored and
	// how many of those were suppressed.
	AddCampaignRecipients(ctx context.Context, orgID, campaignID string, rs []model.CampaignRecipient) (added, suppressed int, err error)
	GetCampaignRecipient(ctx context.Context, orgID, campaignID, id string) (model.CampaignRecipient, error)
	// ListCampaignRecipients lists a page of the campaign's recipients in
	// the order they were added (by id), in p's direction.
	ListCampaignRecipients(ctx context.Context, orgID, campaignID string, f RecipientFilter) ([]model.CampaignRecipient, int, error)
	// DueCampaignRecipients returns up to n pending recipients of the
	// campaign whose NextAttemptAt is nil or not after now, the longest
	// due first (nil first, then by NextAttemptAt, then id). An index
	// serves it: its cost does not grow with the campaign's size.
	DueCampaignRecipients(ctx context.Context, orgID, campaignID string, now time.Time, n int) ([]model.CampaignRecipient, error)
	// ChangeRecipient writes after's Status, Attempts, LastHangupCause,
	// NextAttemptAt, CallIDs and UpdatedAt if the stored recipient still
	// has before's Status and Attempts, adjusting the campaign's counts;
	// false, and nothing written, when it moved on.
	ChangeRecipient(ctx context.Context, before, after *model.CampaignRecipient) (bool, error)
	// LiveRecipients returns the campaign's in_progress recipients, each
	// with its last call's status, hangupCause and endedAt (at most the
	// campaign's concurrency: the dispatcher learns outcomes from them).
	LiveRecipients(ctx context.Context, orgID, campaignID string) ([]RecipientCall, error)
	// FinishRecipients moves every recipient of the campaign in one of
	// the statuses from to status to (expiry at endAt, cancel), adjusting
	// the counts, and returns how many moved.
	FinishRecipients(ctx context.Context, orgID, campaignID string, from []string, to string, at time.Time) (int, error)

	CreateSuppression(ctx context.Context, s *model.Suppression) error // ErrConflict when the number is suppressed already
	GetSuppression(ctx context.Context, orgID, id string) (model.Suppression, error)
	GetSuppressionByNumber(ctx context.Context, orgID, number string) (model.Suppression, error)
	ListSuppressions(ctx context.Context, orgID string, f SuppressionFilter) ([]model.Suppression, int, error)
	DeleteSuppression(ctx context.Context, orgID, id string) error
	// SuppressedNumbers says which of numbers the organization suppresses.
	SuppressedNumbers(ctx context.Context, orgID string, numbers []string) (map[string]bool, error)
}

// RecipientCall is an in_progress recipient and its last call's state.
type RecipientCall struct {
	model.CampaignRecipient
	CallStatus  string
	HangupCause *string
	EndedAt     *time.Time
}

// CampaignFilter narrows a campaign list (sorted by creation time).
type CampaignFilter struct {
	Page
	Status  string
	AgentID string
}

// RecipientFilter narrows a recipient list.
type RecipientFilter struct {
	Page
	Status string
}

// SuppressionFilter narrows a suppression list (newest first by default).
type SuppressionFilter struct {
	Page
	// Query is a substring of the number (% and _ literal).
	Query string
}
