package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
)

const orgColumns = "id, name, concurrency_limit, inbound_reserve_percent, recording_retention_days, transcript_retention_days, webhook_secret, created_at, updated_at"

func scanOrg(r rowScanner) (model.Organization, error) {
	var o model.Organization
	err := r.Scan(&o.ID, &o.Name, &o.ConcurrencyLimit, &o.InboundReservePercent,
		&o.RecordingRetentionDays, &o.TranscriptRetentionDays, &o.WebhookSecret,
		timeDest{&o.CreatedAt}, timeDest{&o.UpdatedAt})
	return o, err
}

// CreateOrg inserts the organization; a zero InboundReservePercent is the
// default (model.DefaultInboundReservePercent), written back as ID and
// times are: an organization that keeps no lines free is made by updating
// it.
func (t *tx) CreateOrg(ctx context.Context, o *model.Organization) error {
	if o.ID == "" {
		o.ID = model.NewID()
	}
	if o.InboundReservePercent == 0 {
		o.InboundReservePercent = model.DefaultInboundReservePercent
	}
	o.CreatedAt, o.UpdatedAt = stamp(o.CreatedAt), stamp(o.UpdatedAt)
	_, err := t.exec(ctx, `INSERT INTO organizations (`+orgColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Name, o.ConcurrencyLimit, o.InboundReservePercent, o.RecordingRetentionDays, o.TranscriptRetentionDays, secret(o.WebhookSecret), t.time(o.CreatedAt), t.time(o.UpdatedAt))
	if err != nil {
		return t.fail(err, "create organization %q", o.Name)
	}
	return nil
}

func (t *tx) GetOrg(ctx context.Context, id string) (model.Organization, error) {
	if !uuids(id) {
		return model.Organization{}, notFound("get organization %s", id)
	}
	return get(ctx, t, scanOrg, "get organization "+id,
		`SELECT `+orgColumns+` FROM organizations WHERE id = ?`, id)
}

func (t *tx) GetOrgByName(ctx context.Context, name string) (model.Organization, error) {
	return get(ctx, t, scanOrg, "get organization named "+name,
		`SELECT `+orgColumns+` FROM organizations WHERE name = ?`, name)
}

func (t *tx) UpdateOrg(ctx context.Context, o *model.Organization) error {
	if !uuids(o.ID) {
		return notFound("update organization %s", o.ID)
	}
	o.UpdatedAt = stamp(o.UpdatedAt)
	return t.change(ctx, "update organization "+o.ID,
		`UPDATE organizations SET name = ?, concurrency_limit = ?, inbound_reserve_percent = ?,
			recording_retention_days = ?, transcript_retention_days = ?, webhook_secret = ?, updated_at = ? WHERE id = ?`,
		o.Name, o.ConcurrencyLimit, o.InboundReservePercent, o.RecordingRetentionDays, o.TranscriptRetentionDays,
		secret(o.WebhookSecret), t.time(o.UpdatedAt), o.ID)
}

func (t *tx) CountOrgs(ctx context.Context) (int, error) {
	return t.count(ctx, "count organizations", `SELECT count(*) FROM organizations`)
}
