// Package org owns organizations (tenants) and their API keys: creating keys,
// authenticating requests by key, the organization's settings, and its
// webhook signing secret.
package org

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// Key and secret formats. A key is recognisable by its prefix (so secret
// scanners can find leaked ones) and carries 256 random bits.
const (
	KeyPrefix           = "pk_live_"
	keyRandomLen        = 43
	keyDisplayLen       = len(KeyPrefix) + 6
	WebhookSecretPrefix = "whsec_"
	DefaultOrgName      = "default"
	MaxNameLen          = 128
	MaxConcurrencyLimit = 10000
	// MaxInboundReservePercent bounds inboundReservePercent: the share of
	// lines campaigns leave free (model.DefaultInboundReservePercent).
	MaxInboundReservePercent = 90
)

// ErrUnauthorized: the key is missing, unknown or revoked.
var ErrUnauthorized = errors.New("unauthorized")

// Service manages organizations and keys.
type Service struct {
	Store store.Store
	Box   *secret.Box
	// DefaultConcurrencyLimit is a new organization's concurrencyLimit.
	DefaultConcurrencyLimit int
}

// CreateKey creates a key for the organization named orgName, creating the
// organization first when it does not exist. It returns the key's secret,
// which is shown this once and stored only as a hash.
func (s *Service) CreateKey(ctx context.Context, orgName string) (string, model.Organization, error) {
	if invalid.IsBlank(orgName) || invalid.Len(orgName) > MaxNameLen {
		return "", model.Organization{}, fmt.Errorf("organization name must be 1 to %d characters", MaxNameLen)
	}
	var (
		token string
		o     model.Organization
	)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if o, err = s.EnsureOrg(ctx, tx, orgName); err != nil {
			return err
		}
		token, _, err = createKey(ctx, tx, o.ID, "")
		return err
	})
	return token, o, err
}

// Bootstrap prepares an empty database: when there is no API key at all it
// creates organization "default" with one key and returns the key's secret;
// otherwise it returns "".
func (s *Service) Bootstrap(ctx context.Context) (string, error) {
	var token string
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		token, _, err = s.BootstrapTx(ctx, tx)
		return err
	})
	return token, err
}

// BootstrapTx is Bootstrap inside the caller's transaction; it returns the
// organization it gave the key to as well.
func (s *Service) BootstrapTx(ctx context.Context, tx store.Tx) (string, model.Organization, error) {
	n, err := tx.CountAPIKeys(ctx)
	if err != nil || n > 0 {
		return "", model.Organization{}, err
	}
	o, err := s.EnsureOrg(ctx, tx, DefaultOrgName)
	if err != nil {
		return "", model.Organization{}, err
	}
	token, _, err := createKey(ctx, tx, o.ID, "")
	return token, o, err
}

// EnsureOrg returns the organization named name, creating it when there is
// none, inside the caller's transaction.
func (s *Service) EnsureOrg(ctx context.Context, tx store.Tx, name string) (model.Organization, error) {
	if invalid.IsBlank(name) || invalid.Len(name) > MaxNameLen {
		return model.Organization{}, fmt.Errorf("organization name must be 1 to %d characters", MaxNameLen)
	}
	o, err := tx.GetOrgByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		o, err = s.createOrg(ctx, tx, name)
	}
	return o, err
}

func (s *Service) createOrg(ctx context.Context, tx store.Tx, name string) (model.Organization, error) {
	now := model.Now()
	o := model.Organization{ID: model.NewID(), Name: name, ConcurrencyLimit: s.DefaultConcurrencyLimit,
		InboundReservePercent: model.DefaultInboundReservePercent, CreatedAt: now, UpdatedAt: now}
	return o, tx.CreateOrg(ctx, &o)
}

func createKey(ctx context.Context, tx store.Tx, orgID, name string) (string, model.APIKey, error) {
	token := secret.Token(KeyPrefix, keyRandomLen)
	k := model.APIKey{
		ID: model.NewID(), OrgID: orgID, Name: name, Prefix: token[:keyDisplayLen],
		Hash: secret.Hash(token), CreatedAt: model.Now(),
	}
	return token, k, tx.CreateAPIKey(ctx, &k)
}

// Authenticate finds the live key whose secret is token.
func (s *Service) Authenticate(ctx context.Context, token string) (model.APIKey, error) {
	if len(token) < len(KeyPrefix) || len(token) > 256 {
		return model.APIKey{}, ErrUnauthorized
	}
	var k model.APIKey
	err := s.Store.View(ctx, func(tx store.Tx) (err error) {
		k, err = tx.GetAPIKeyByHash(ctx, secret.Hash(token))
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return model.APIKey{}, ErrUnauthorized
	case err != nil:
		return model.APIKey{}, err
	case k.RevokedAt != nil && !k.RevokedAt.After(time.Now()):
		return model.APIKey{}, ErrUnauthorized
	}
	return k, nil
}

// Keys lists an organization's keys (without secrets).
func (s *Service) Keys(ctx context.Context, orgName string) ([]model.APIKey, error) {
	var keys []model.APIKey
	err := s.Store.View(ctx, func(tx store.Tx) error {
		o, err := tx.GetOrgByName(ctx, orgName)
		if err != nil {
			return err
		}
		keys, err = tx.ListAPIKeys(ctx, o.ID)
		return err
	})
	return keys, err
}

// RevokeKey revokes one of the organization's keys by id.
func (s *Service) RevokeKey(ctx context.Context, orgName, keyID string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		o, err := tx.GetOrgByName(ctx, orgName)
		if err != nil {
			return err
		}
		return tx.RevokeAPIKey(ctx, o.ID, keyID)
	})
}

// Get returns the organization.
func (s *Service) Get(ctx context.Context, orgID string) (model.Organization, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(ctx, orgID) })
}

// Input is an organization partial-update request.
type Input struct {
	Name             opt.Field[string] `json:"name"`
	ConcurrencyLimit opt.Field[int]    `json:"concurrencyLimit"`
	// InboundReservePercent is the share of concurrencyLimit campaigns
	// leave free for inbound and API calls (campaign.Lines).
	InboundReservePercent opt.Field[int] `json:"inboundReservePercent"`
	// RecordingRetentionDays and TranscriptRetentionDays: null keeps
	// forever, else model.MinRetentionDays to model.MaxRetentionDays.
	RecordingRetentionDays  opt.Field[int] `json:"recordingRetentionDays"`
	TranscriptRetentionDays opt.Field[int] `json:"transcriptRetentionDays"`
}

// Update applies a partial update. A name another organization has is a conflict.
func (s *Service) Update(ctx context.Context, orgID string, in Input) (model.Organization, error) {
	var l invalid.List
	switch {
	case in.Name.Null:
		l.Add("name", "must not be null")
	case in.Name.Present() && (invalid.IsBlank(in.Name.V) || invalid.Len(in.Name.V) > MaxNameLen):
		l.Add("name", "must be 1 to %d characters", MaxNameLen)
	}
	switch {
	case in.ConcurrencyLimit.Null:
		l.Add("concurrencyLimit", "must not be null")
	case in.ConcurrencyLimit.Present() && (in.ConcurrencyLimit.V < 1 || in.ConcurrencyLimit.V > MaxConcurrencyLimit):
		l.Add("concurrencyLimit", "must be between 1 and %d", MaxConcurrencyLimit)
	}
	switch {
	case in.InboundReservePercent.Null:
		l.Add("inboundReservePercent", "must not be null")
	case in.InboundReservePercent.Present() && (in.InboundReservePercent.V < 0 || in.InboundReservePercent.V > MaxInboundReservePercent):
		l.Add("inboundReservePercent", "must be between 0 and %d", MaxInboundReservePercent)
	}
	for _, f := range []struct {
		name string
		days opt.Field[int]
	}{{"recordingRetentionDays", in.RecordingRetentionDays}, {"transcriptRetentionDays", in.TranscriptRetentionDays}} {
		if f.days.Present() && (f.days.V < model.MinRetentionDays || f.days.V > model.MaxRetentionDays) {
			l.Add(f.name, "must be null or between %d and %d", model.MinRetentionDays, model.MaxRetentionDays)
		}
	}
	if err := l.Err(); err != nil {
		return model.Organization{}, err
	}
	var o model.Organization
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if o, err = tx.GetOrg(ctx, orgID); err != nil {
			return err
		}
		if in.Name.Present() {
			o.Name = in.Name.V
		}
		if in.ConcurrencyLimit.Present() {
			o.ConcurrencyLimit = in.ConcurrencyLimit.V
		}
		if in.InboundReservePercent.Present() {
			o.InboundReservePercent = in.InboundReservePercent.V
		}
		retention(&o.RecordingRetentionDays, in.RecordingRetentionDays)
		retention(&o.TranscriptRetentionDays, in.TranscriptRetentionDays)
		o.UpdatedAt = model.Now()
		err = tx.UpdateOrg(ctx, &o)
		if errors.Is(err, store.ErrConflict) {
			return &invalid.Conflict{Message: "another organization has this name"}
		}
		return err
	})
	return o, err
}

// retention applies a retention period's update: null clears it (keep
// forever), a value sets it, absent leaves it.
func retention(days **int, f opt.Field[int]) {
	if f.Set {
		*days = f.Ptr()
	}
}

// RotateWebhookSecret gives the organization a new signing secret for its
// webhooks and returns it; the previous one stops signing at once.
func (s *Service) RotateWebhookSecret(ctx context.Context, orgID string) (string, error) {
	sec := secret.Token(WebhookSecretPrefix, keyRandomLen)
	err := s.setWebhookSecret(ctx, orgID, s.Box.Seal(sec))
	return sec, err
}

// DeleteWebhookSecret stops signing the organization's webhooks.
func (s *Service) DeleteWebhookSecret(ctx context.Context, orgID string) error {
	return s.setWebhookSecret(ctx, orgID, nil)
}

func (s *Service) setWebhookSecret(ctx context.Context, orgID string, sealed []byte) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		o, err := tx.GetOrg(ctx, orgID)
		if err != nil {
			return err
		}
		o.WebhookSecret, o.UpdatedAt = sealed, model.Now()
		return tx.UpdateOrg(ctx, &o)
	})
}

// WebhookSecret returns the organization's signing secret, "" when it has none.
func (s *Service) WebhookSecret(ctx context.Context, orgID string) (string, error) {
	o, err := s.Get(ctx, orgID)
	if err != nil {
		return "", err
	}
	return s.Box.Open(o.WebhookSecret)
}
