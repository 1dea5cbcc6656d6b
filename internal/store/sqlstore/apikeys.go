package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
)

const apiKeyColumns = "id, org_id, name, prefix, hash, created_at, revoked_at, last_used_at"

func scanAPIKey(r rowScanner) (model.APIKey, error) {
	var k model.APIKey
	err := r.Scan(&k.ID, &k.OrgID, &k.Name, &k.Prefix, &k.Hash,
		timeDest{&k.CreatedAt}, nullTimeDest{&k.RevokedAt}, nullTimeDest{&k.LastUsedAt})
	return k, err
}

func (t *tx) CreateAPIKey(ctx context.Context, k *model.APIKey) error {
	if k.ID == "" {
		k.ID = model.NewID()
	}
	k.CreatedAt = stamp(k.CreatedAt)
	_, err := t.exec(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.OrgID, k.Name, k.Prefix, k.Hash, t.time(k.CreatedAt), t.nullTime(k.RevokedAt), t.nullTime(k.LastUsedAt))
	if err != nil {
		return t.fail(err, "create api key %s", k.ID)
	}
	return nil
}

// GetAPIKeyByHash finds a key in any organization, revoked ones too: the
// caller decides what a revoked key means.
func (t *tx) GetAPIKeyByHash(ctx context.Context, hash []byte) (model.APIKey, error) {
	return get(ctx, t, scanAPIKey, "get api key by hash",
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = ?`, hash)
}

func (t *tx) ListAPIKeys(ctx context.Context, orgID string) ([]model.APIKey, error) {
	if !uuids(orgID) {
		return []model.APIKey{}, nil
	}
	return all(ctx, t, scanAPIKey, "list api keys",
		`SELECT `+apiKeyColumns+` FROM api_keys WHERE org_id = ? ORDER BY created_at DESC, id DESC`, orgID)
}

// RevokeAPIKey stamps the key revoked now; revoking it again keeps the first
// time.
func (t *tx) RevokeAPIKey(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("revoke api key %s", id)
	}
	return t.change(ctx, "revoke api key "+id,
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE org_id = ? AND id = ?`,
		t.time(model.Now()), orgID, id)
}

func (t *tx) CountAPIKeys(ctx context.Context) (int, error) {
	return t.count(ctx, "count api keys", `SELECT count(*) FROM api_keys`)
}
