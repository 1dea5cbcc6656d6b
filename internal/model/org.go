package model

import "time"

// Organization is a tenant. Every other resource belongs to exactly one.
type Organization struct {
	ID               string
	Name             string
	ConcurrencyLimit int
	// InboundReservePercent is the share of ConcurrencyLimit campaigns
	// leave free for inbound and API calls (campaign.Lines).
	InboundReservePercent int
	// RecordingRetentionDays and TranscriptRetentionDays bound how long a
	// call's recording and transcript are kept after the call ended; nil
	// keeps them forever (conventions.md, "Serving on several machines").
	RecordingRetentionDays  *int
	TranscriptRetentionDays *int
	// WebhookSecret is the sealed (encrypted) HMAC signing secret for
	// outgoing webhooks; empty when the organization has none.
	WebhookSecret []byte
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// DefaultInboundReservePercent is an organization's InboundReservePercent
// unless it says otherwise.
const DefaultInboundReservePercent = 20

// MinRetentionDays and MaxRetentionDays bound an organization's retention
// periods when set.
const (
	MinRetentionDays = 1
	MaxRetentionDays = 3650
)

// APIKey authenticates requests for one organization. Only a hash of the
// secret is stored; Prefix is a short, non-secret part kept for display.
type APIKey struct {
	ID         string
	OrgID      string
	Name       string
	Prefix     string
	Hash       []byte
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}
