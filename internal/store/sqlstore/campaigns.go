package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// campaignColumns is every column of campaigns, counts included; writes
// leave the counts to adjustCounts.
const campaignColumns = "id, org_id, agent_id, name, description, status, start_at, end_at, config, " +
	"count_total, count_pending, count_in_progress, count_completed, count_failed, count_suppressed, " +
	"count_expired, count_canceled, created_at, updated_at, started_at, completed_at, next_dial_at, " +
	"dispatch_owner, dispatch_until, webhook_status"

func scanCampaign(r rowScanner) (model.Campaign, error) {
	var c model.Campaign
	n := &c.Counts
	err := r.Scan(&c.ID, &c.OrgID, &c.AgentID, &c.Name, &c.Description, &c.Status,
		nullTimeDest{&c.StartAt}, nullTimeDest{&c.EndAt}, documentDest{&c.Config},
		&n.Total, &n.Pending, &n.InProgress, &n.Completed, &n.Failed, &n.Suppressed, &n.Expired, &n.Canceled,
		timeDest{&c.CreatedAt}, timeDest{&c.UpdatedAt}, nullTimeDest{&c.StartedAt}, nullTimeDest{&c.CompletedAt},
		timeDest{&c.NextDialAt}, &c.DispatchOwner, nullTimeDest{&c.DispatchUntil}, &c.WebhookStatus)
	return c, err
}

// campaignWrite prepares c to be written, as reading it back gives it
// (times in UTC to the millisecond, CreatedAt with create and UpdatedAt
// now when unset), and returns its config document.
func campaignWrite(c *model.Campaign, create bool) (string, error) {
	if create {
		if c.ID == "" {
			c.ID = model.NewID()
		}
		c.CreatedAt = stamp(c.CreatedAt)
		c.Counts = model.CampaignCounts{} // a new campaign has no recipients
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	c.NextDialAt = exact(c.NextDialAt)
	for _, p := range []**time.Time{&c.StartAt, &c.EndAt, &c.StartedAt, &c.CompletedAt, &c.DispatchUntil} {
		if *p != nil {
			v := exact(**p)
			*p = &v
		}
	}
	if !uuids(c.ID, c.OrgID, c.AgentID) {
		return "", notFound("campaign %s: organization %s, agent %s", c.ID, c.OrgID, c.AgentID)
	}
	return document(c.Config)
}

// exact is t as stored, the zero time included (stamp makes that now).
func exact(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// hasWebhook is the has_webhook column: whether finishing the campaign
// owes a campaign_completed delivery.
func hasWebhook(c *model.Campaign) bool {
	return c.Config.WebhookURL != nil && *c.Config.WebhookURL != ""
}

// CreateCampaign inserts the campaign with no recipients (zero counts).
// Its agent is recorded, not referenced: deleting the agent leaves it.
func (t *tx) CreateCampaign(ctx context.Context, c *model.Campaign) error {
	config, err := campaignWrite(c, true)
	if err != nil {
		return fmt.Errorf("create %w", err)
	}
	_, err = t.exec(ctx, `INSERT INTO campaigns (id, org_id, agent_id, name, description, status, start_at, end_at,
		config, has_webhook, created_at, updated_at, started_at, completed_at, next_dial_at, dispatch_owner,
		dispatch_until, webhook_status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.OrgID, c.AgentID, c.Name, c.Description, c.Status, t.nullTime(c.StartAt), t.nullTime(c.EndAt),
		config, hasWebhook(c), t.time(c.CreatedAt), t.time(c.UpdatedAt), t.nullTime(c.StartedAt),
		t.nullTime(c.CompletedAt), t.d.Time(c.NextDialAt), c.DispatchOwner, t.nullTime(c.DispatchUntil), c.WebhookStatus)
	if err != nil {
		return t.fail(err, "create campaign %s", c.ID)
	}
	return nil
}

func (t *tx) GetCampaign(ctx context.Context, orgID, id string) (model.Campaign, error) {
	if !uuids(orgID, id) {
		return model.Campaign{}, notFound("get campaign %s", id)
	}
	return get(ctx, t, scanCampaign, "get campaign "+id,
		`SELECT `+campaignColumns+` FROM campaigns WHERE org_id = ? AND id = ?`, orgID, id)
}

// GetCampaignForUpdate reads the campaign and, in a write transaction on
// PostgreSQL, locks its row until the transaction ends (FOR NO KEY UPDATE:
// its recipients may still be inserted meanwhile, they only reference it).
func (t *tx) GetCampaignForUpdate(ctx context.Context, orgID, id string) (model.Campaign, error) {
	if !uuids(orgID, id) {
		return model.Campaign{}, notFound("get campaign %s for update", id)
	}
	return get(ctx, t, scanCampaign, "get campaign "+id+" for update",
		`SELECT `+campaignColumns+` FROM campaigns WHERE org_id = ? AND id = ?`+t.forUpdate(false), orgID, id)
}

// ListCampaigns filters by status and agent, newest first unless f asks
// for oldest first.
func (t *tx) ListCampaigns(ctx context.Context, orgID string, f store.CampaignFilter) ([]model.Campaign, int, error) {
	if !uuids(orgID) {
		return []model.Campaign{}, 0, nil
	}
	where, args := "org_id = ?", []any{orgID}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	if f.AgentID != "" {
		if !uuids(f.AgentID) {
			return []model.Campaign{}, 0, nil // no such agent, so none of its campaigns
		}
		where += " AND agent_id = ?"
		args = append(args, f.AgentID)
	}
	return list(ctx, t, listing{
		columns: campaignColumns,
		from:    "campaigns",
		where:   where,
		args:    args,
		order:   newestFirst(f.Page),
		page:    f.Page,
	}, scanCampaign, "list campaigns")
}

// UpdateCampaign writes every column but the keys, created_at and the
// counts.
func (t *tx) UpdateCampaign(ctx context.Context, c *model.Campaign) error {
	if !uuids(c.OrgID, c.ID) {
		return notFound("update campaign %s", c.ID)
	}
	config, err := campaignWrite(c, false)
	if err != nil {
		return fmt.Errorf("update %w", err)
	}
	return t.change(ctx, "update campaign "+c.ID,
		`UPDATE campaigns SET agent_id = ?, name = ?, description = ?, status = ?, start_at = ?, end_at = ?,
			config = ?, has_webhook = ?, updated_at = ?, started_at = ?, completed_at = ?, next_dial_at = ?,
			dispatch_owner = ?, dispatch_until = ?, webhook_status = ?
		WHERE org_id = ? AND id = ?`,
		c.AgentID, c.Name, c.Description, c.Status, t.nullTime(c.StartAt), t.nullTime(c.EndAt),
		config, hasWebhook(c), t.time(c.UpdatedAt), t.nullTime(c.StartedAt), t.nullTime(c.CompletedAt),
		t.d.Time(c.NextDialAt), c.DispatchOwner, t.nullTime(c.DispatchUntil), c.WebhookStatus, c.OrgID, c.ID)
}

// DeleteCampaign deletes the campaign; the schema deletes its recipients.
// Its calls keep their campaign_id (no foreign key).
func (t *tx) DeleteCampaign(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete campaign %s", id)
	}
	return t.change(ctx, "delete campaign "+id, `DELETE FROM campaigns WHERE org_id = ? AND id = ?`, orgID, id)
}

// activeCampaign is the condition of the campaigns_active index, written
// out the same way so that both engines match the query to it.
const activeCampaign = `(status = 'running'
       OR (status = 'paused' AND count_in_progress > 0)
       OR (status IN ('completed', 'canceled') AND webhook_status IS NULL AND has_webhook))`

// ActiveCampaigns reads the campaigns_active index, oldest first.
func (t *tx) ActiveCampaigns(ctx context.Context, n int) ([]model.Campaign, error) {
	if n <= 0 {
		return []model.Campaign{}, nil
	}
	return all(ctx, t, scanCampaign, "list active campaigns",
		`SELECT `+campaignColumns+` FROM campaigns WHERE `+activeCampaign+` ORDER BY created_at, id LIMIT ?`, n)
}

// ClaimCampaignDispatch takes or renews owner's hold when nobody holds the
// campaign, owner does, or the holder's hold ended before now. A campaign
// that does not exist is not held: false.
func (t *tx) ClaimCampaignDispatch(ctx context.Context, orgID, id, owner string, now, until time.Time) (bool, error) {
	if !uuids(orgID, id) {
		return false, nil
	}
	res, err := t.exec(ctx, `UPDATE campaigns SET dispatch_owner = ?, dispatch_until = ?
		WHERE org_id = ? AND id = ?
		AND (dispatch_owner IS NULL OR dispatch_owner = ? OR dispatch_until IS NULL OR dispatch_until < ?)`,
		owner, t.time(until), orgID, id, owner, t.time(now))
	if err != nil {
		return false, t.fail(err, "claim the dispatch of campaign %s", id)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.fail(err, "claim the dispatch of campaign %s", id)
	}
	return n == 1, nil
}

// PaceCampaign writes next_dial_at alone.
func (t *tx) PaceCampaign(ctx context.Context, orgID, id string, next time.Time) error {
	if !uuids(orgID, id) {
		return notFound("pace campaign %s", id)
	}
	return t.change(ctx, "pace campaign "+id,
		`UPDATE campaigns SET next_dial_at = ? WHERE org_id = ? AND id = ?`, t.d.Time(exact(next)), orgID, id)
}

// countColumns names the count column of each recipient status.
var countColumns = map[string]string{
	model.RecipientPending:    "count_pending",
	model.RecipientInProgress: "count_in_progress",
	model.RecipientCompleted:  "count_completed",
	model.RecipientFailed:     "count_failed",
	model.RecipientSuppressed: "count_suppressed",
	model.RecipientExpired:    "count_expired",
	model.RecipientCanceled:   "count_canceled",
}

// checkStatus refuses a recipient status the counts have no column for.
func checkStatus(status string) error {
	if _, ok := countColumns[status]; !ok {
		return fmt.Errorf("unknown campaign recipient status %q", status)
	}
	return nil
}

// adjustCounts adds added to the campaign's total and each of byStatus to
// its status's count, in one UPDATE of the columns that change; nothing to
// add writes nothing. ErrNotFound when the organization has no such
// campaign.
func (t *tx) adjustCounts(ctx context.Context, orgID, campaignID string, added int, byStatus map[string]int) error {
	var set []string
	var args []any
	if added != 0 {
		set = append(set, "count_total = count_total + ?")
		args = append(args, added)
	}
	for _, s := range model.RecipientStatuses { // a fixed order: few distinct queries
		if d := byStatus[s]; d != 0 {
			col := countColumns[s]
			set = append(set, col+" = "+col+" + ?")
			args = append(args, d)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return t.change(ctx, "count the recipients of campaign "+campaignID,
		`UPDATE campaigns SET `+strings.Join(set, ", ")+` WHERE org_id = ? AND id = ?`,
		append(args, orgID, campaignID)...)
}
