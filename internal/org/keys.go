package org

import (
	"context"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// MaxKeyNameLen is the longest label a key may carry.
const MaxKeyNameLen = 128

// IssueKey creates a key labelled name (may be empty) for the organization
// and returns its secret, shown this once, with the stored key.
func (s *Service) IssueKey(ctx context.Context, orgID, name string) (string, model.APIKey, error) {
	if invalid.Len(name) > MaxKeyNameLen {
		return "", model.APIKey{}, invalid.One("name", "must be at most %d characters", MaxKeyNameLen)
	}
	if p := invalid.Text(name); p != "" {
		return "", model.APIKey{}, invalid.One("name", "%s", p)
	}
	var (
		token string
		k     model.APIKey
	)
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if _, err = tx.GetOrg(ctx, orgID); err != nil {
			return err
		}
		token, k, err = createKey(ctx, tx, orgID, name)
		return err
	})
	return token, k, err
}

// OrgKeys lists the organization's keys, newest first, without secrets.
func (s *Service) OrgKeys(ctx context.Context, orgID string) ([]model.APIKey, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) ([]model.APIKey, error) { return tx.ListAPIKeys(ctx, orgID) })
}

// RevokeOrgKey revokes the organization's key id; another organization's
// key is store.ErrNotFound.
func (s *Service) RevokeOrgKey(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.RevokeAPIKey(ctx, orgID, id) })
}
