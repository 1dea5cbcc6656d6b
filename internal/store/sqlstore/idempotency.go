package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

const idempotencyColumns = "org_id, scope, key, request_hash, resource_id, status_code, response, created_at"

func scanIdempotencyKey(r rowScanner) (model.IdempotencyKey, error) {
	var k model.IdempotencyKey
	var response sql.NullString
	err := r.Scan(&k.OrgID, &k.Scope, &k.Key, &k.RequestHash, &k.ResourceID, &k.StatusCode, &response, timeDest{&k.CreatedAt})
	if response.Valid {
		k.Response = []byte(response.String)
	}
	return k, err
}

// PutIdempotencyKey stores k. The organization's keys from before since
// are deleted first, so an expired key is used afresh and old keys do not
// pile up; a key stored since then is ErrConflict (on PostgreSQL the
// insert waits for a concurrent transaction holding the same key, and is
// ErrConflict once it commits).
func (t *tx) PutIdempotencyKey(ctx context.Context, k *model.IdempotencyKey, since time.Time) error {
	if !uuids(k.OrgID) {
		return notFound("idempotency key of org %s", k.OrgID)
	}
	if _, err := t.exec(ctx, `DELETE FROM idempotency_keys WHERE org_id = ? AND created_at < ?`, k.OrgID, t.time(since)); err != nil {
		return t.fail(err, "expire idempotency keys")
	}
	k.CreatedAt = stamp(k.CreatedAt)
	var response any
	if k.Response != nil {
		response = string(k.Response)
	}
	_, err := t.exec(ctx, `INSERT INTO idempotency_keys (`+idempotencyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.OrgID, k.Scope, k.Key, k.RequestHash, k.ResourceID, k.StatusCode, response, t.time(k.CreatedAt))
	if err != nil {
		return t.fail(err, "store idempotency key")
	}
	return nil
}

// GetIdempotencyKey reads the organization's key on scope stored since
// since; an older or missing one is ErrNotFound.
func (t *tx) GetIdempotencyKey(ctx context.Context, orgID, scope, key string, since time.Time) (model.IdempotencyKey, error) {
	if !uuids(orgID) {
		return model.IdempotencyKey{}, notFound("idempotency key")
	}
	return get(ctx, t, scanIdempotencyKey, "get idempotency key",
		`SELECT `+idempotencyColumns+` FROM idempotency_keys WHERE org_id = ? AND scope = ? AND key = ? AND created_at >= ?`,
		orgID, scope, key, t.time(since))
}

// SetIdempotencyResponse records the first response's body of a key whose
// resource was created before its answer was known.
func (t *tx) SetIdempotencyResponse(ctx context.Context, orgID, scope, key string, body []byte) error {
	if !uuids(orgID) {
		return notFound("idempotency key")
	}
	return t.change(ctx, "set idempotency response",
		`UPDATE idempotency_keys SET response = ? WHERE org_id = ? AND scope = ? AND key = ?`, string(body), orgID, scope, key)
}
