package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// recipientColumns is what a recipient is read with (last_call_id is the
// last of call_ids, only written). Queries name the table r.
const recipientColumns = "r.id, r.org_id, r.campaign_id, r.to_number, r.variables, r.timezone, r.status, r.attempts, " +
	"r.last_hangup_cause, r.next_attempt_at, r.call_ids, r.created_at, r.updated_at"

// recipientInsert is the column list of an inserted recipient.
const recipientInsert = "id, org_id, campaign_id, to_number, variables, timezone, status, attempts, " +
	"last_hangup_cause, next_attempt_at, last_call_id, call_ids, created_at, updated_at"

// recipientParams is how many parameters an inserted recipient takes.
const recipientParams = 14

// atOnce is how next_attempt_at holds "no wait" (NextAttemptAt nil): the
// column is never NULL, so the due recipients are one range of an index in
// the order they are dialed, on both engines.
var atOnce = time.Unix(0, 0).UTC()

// nextAttemptDest scans next_attempt_at, atOnce as nil.
type nextAttemptDest struct{ t **time.Time }

func (d nextAttemptDest) Scan(src any) error {
	t, err := parseTime(src)
	if err != nil {
		return err
	}
	if t.Equal(atOnce) {
		*d.t = nil
		return nil
	}
	*d.t = &t
	return nil
}

// nextAttempt writes NextAttemptAt.
func (t *tx) nextAttempt(v *time.Time) any {
	if v == nil {
		return t.d.Time(atOnce)
	}
	return t.d.Time(exact(*v))
}

func scanRecipient(r rowScanner) (model.CampaignRecipient, error) {
	var c model.CampaignRecipient
	err := r.Scan(recipientDest(&c)...)
	return c, err
}

func recipientDest(c *model.CampaignRecipient) []any {
	return []any{&c.ID, &c.OrgID, &c.CampaignID, &c.ToNumber, documentDest{&c.Variables}, &c.Timezone, &c.Status,
		&c.Attempts, &c.LastHangupCause, nextAttemptDest{&c.NextAttemptAt}, documentDest{&c.CallIDs},
		timeDest{&c.CreatedAt}, timeDest{&c.UpdatedAt}}
}

// recipientWrite prepares r's changing fields to be written as reading
// them back gives them (times in UTC to the millisecond, UpdatedAt now when
// unset, no nil call list) and returns its calls as a document and the
// last of them.
func recipientWrite(r *model.CampaignRecipient) (callIDs string, lastCall any, err error) {
	r.UpdatedAt = stamp(r.UpdatedAt)
	if r.NextAttemptAt != nil {
		v := exact(*r.NextAttemptAt)
		r.NextAttemptAt = &v
	}
	if r.CallIDs == nil {
		r.CallIDs = []string{}
	}
	if !uuids(r.CallIDs...) {
		return "", nil, notFound("recipient %s: calls %v", r.ID, r.CallIDs)
	}
	if n := len(r.CallIDs); n > 0 {
		lastCall = r.CallIDs[n-1]
	}
	if callIDs, err = document(r.CallIDs); err != nil {
		return "", nil, fmt.Errorf("recipient %s calls: %w", r.ID, err)
	}
	return callIDs, lastCall, nil
}

// maxInsertRows is how many recipients one INSERT carries: 14,336
// parameters, under both SQLite's 32,766 and PostgreSQL's 65,535.
const maxInsertRows = 1024

// chunkSizes splits n into the sizes of the statements that carry it:
// full chunks of max (a power of two), then the rest in falling powers of
// two. A query is rebound and may be prepared once per distinct text, so
// the sizes are few (at most log2(max)+1) whatever n is.
func chunkSizes(n, max int) []int {
	var out []int
	for ; n >= max; n -= max {
		out = append(out, max)
	}
	for p := max / 2; p >= 1; p /= 2 {
		if n >= p {
			out = append(out, p)
			n -= p
		}
	}
	return out
}

// AddCampaignRecipients inserts rs in multi-row statements that pass over
// a number the campaign holds already (ON CONFLICT DO NOTHING) and return
// the status of each row they stored, from which the counts are adjusted
// in one UPDATE. rs's IDs, OrgID, CampaignID and times are filled in as
// stored. A campaign the organization does not have is ErrNotFound.
func (t *tx) AddCampaignRecipients(ctx context.Context, orgID, campaignID string, rs []model.CampaignRecipient) (added, suppressed int, err error) {
	what := "add recipients to campaign " + campaignID
	if !uuids(orgID, campaignID) {
		return 0, 0, notFound("%s", what)
	}
	now := model.Now()
	byStatus := map[string]int{}
	start := 0
	for _, size := range chunkSizes(len(rs), maxInsertRows) {
		chunk := rs[start : start+size]
		start += size
		args := make([]any, 0, size*recipientParams)
		for j := range chunk {
			r := &chunk[j]
			if err := checkStatus(r.Status); err != nil {
				return 0, 0, fmt.Errorf("%s: %w", what, err)
			}
			if r.ID == "" {
				r.ID = model.NewID()
			}
			r.OrgID, r.CampaignID = orgID, campaignID
			if r.CreatedAt.IsZero() {
				r.CreatedAt = now
			}
			r.CreatedAt = exact(r.CreatedAt)
			if r.UpdatedAt.IsZero() {
				r.UpdatedAt = r.CreatedAt
			}
			if r.Variables == nil {
				r.Variables = map[string]any{}
			}
			if !uuids(r.ID) {
				return 0, 0, notFound("%s: recipient %s", what, r.ID)
			}
			calls, last, err := recipientWrite(r)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %w", what, err)
			}
			vars, err := document(r.Variables)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: recipient %s variables: %w", what, r.ID, err)
			}
			args = append(args, r.ID, orgID, campaignID, r.ToNumber, vars, r.Timezone, r.Status, r.Attempts,
				r.LastHangupCause, t.nextAttempt(r.NextAttemptAt), last, calls, t.time(r.CreatedAt), t.time(r.UpdatedAt))
		}
		rows := strings.TrimSuffix(strings.Repeat("("+placeholders(recipientParams)+"), ", size), ", ")
		statuses, err := all(ctx, t, scanString, what,
			`INSERT INTO campaign_recipients (`+recipientInsert+`) VALUES `+rows+`
			ON CONFLICT (org_id, campaign_id, to_number) DO NOTHING RETURNING status`, args...)
		if err != nil {
			return 0, 0, err
		}
		for _, s := range statuses {
			byStatus[s]++
		}
		added += len(statuses)
	}
	if added == 0 {
		// Nothing stored: the counts stay, but the campaign must exist.
		_, err := get(ctx, t, scanString, what, `SELECT id FROM campaigns WHERE org_id = ? AND id = ?`, orgID, campaignID)
		return 0, 0, err
	}
	if err := t.adjustCounts(ctx, orgID, campaignID, added, byStatus); err != nil {
		return 0, 0, err
	}
	return added, byStatus[model.RecipientSuppressed], nil
}

func (t *tx) GetCampaignRecipient(ctx context.Context, orgID, campaignID, id string) (model.CampaignRecipient, error) {
	if !uuids(orgID, campaignID, id) {
		return model.CampaignRecipient{}, notFound("get recipient %s", id)
	}
	return get(ctx, t, scanRecipient, "get recipient "+id,
		`SELECT `+recipientColumns+` FROM campaign_recipients r WHERE r.org_id = ? AND r.campaign_id = ? AND r.id = ?`,
		orgID, campaignID, id)
}

// ListCampaignRecipients lists in upload order (ids are UUIDv7): oldest
// first unless f's SortDir is Desc. The total is the campaign's count of
// the status (or of all its recipients), which the store keeps: a list of
// 100,000 is not counted for each page.
func (t *tx) ListCampaignRecipients(ctx context.Context, orgID, campaignID string, f store.RecipientFilter) ([]model.CampaignRecipient, int, error) {
	if !uuids(orgID, campaignID) {
		return []model.CampaignRecipient{}, 0, nil
	}
	where, args := "r.org_id = ? AND r.campaign_id = ?", []any{orgID, campaignID}
	count := "count_total"
	if f.Status != "" {
		col, ok := countColumns[f.Status]
		if !ok {
			return []model.CampaignRecipient{}, 0, nil // no recipient has it
		}
		where += " AND r.status = ?"
		args = append(args, f.Status)
		count = col
	}
	dir := "ASC"
	if strings.EqualFold(f.SortDir, store.Desc) {
		dir = "DESC"
	}
	return list(ctx, t, listing{
		columns:   recipientColumns,
		from:      "campaign_recipients r",
		where:     where,
		args:      args,
		order:     "r.id " + dir,
		page:      f.Page,
		total:     `SELECT COALESCE((SELECT ` + count + ` FROM campaigns WHERE org_id = ? AND id = ?), 0)`,
		totalArgs: []any{orgID, campaignID},
	}, scanRecipient, "list recipients of campaign "+campaignID)
}

// DueCampaignRecipients reads one range of campaign_recipients_due (the
// status written as the index's literal, so both engines match it): the
// pending recipients due by now, at once (atOnce) first, then by due time,
// then upload order.
func (t *tx) DueCampaignRecipients(ctx context.Context, orgID, campaignID string, now time.Time, n int) ([]model.CampaignRecipient, error) {
	if !uuids(orgID, campaignID) || n <= 0 {
		return []model.CampaignRecipient{}, nil
	}
	return all(ctx, t, scanRecipient, "list due recipients of campaign "+campaignID,
		dueRecipients, orgID, campaignID, t.d.Time(exact(now)), n)
}

// dueRecipients is DueCampaignRecipients' query: organization, campaign,
// now, limit.
const dueRecipients = `SELECT ` + recipientColumns + ` FROM campaign_recipients r
		WHERE r.org_id = ? AND r.campaign_id = ? AND r.status = '` + model.RecipientPending + `' AND r.next_attempt_at <= ?
		ORDER BY r.next_attempt_at, r.id LIMIT ?`

// DueRecipientsQuery is DueCampaignRecipients' query, with ? placeholders
// for the organization, the campaign, now (as the engine writes a time)
// and the limit: the engines' tests check its plan is one range of
// campaign_recipients_due, read in order, whatever the campaign's size.
func DueRecipientsQuery() string { return dueRecipients }

// ChangeRecipient is an UPDATE guarded by the status and attempts before
// read; when it lands and the status changed, the counts move with it.
func (t *tx) ChangeRecipient(ctx context.Context, before, after *model.CampaignRecipient) (bool, error) {
	what := "change recipient " + after.ID
	if !uuids(after.OrgID, after.CampaignID, after.ID) {
		return false, nil
	}
	if err := checkStatus(after.Status); err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	calls, last, err := recipientWrite(after)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	res, err := t.exec(ctx, `UPDATE campaign_recipients SET status = ?, attempts = ?, last_hangup_cause = ?,
			next_attempt_at = ?, last_call_id = ?, call_ids = ?, updated_at = ?
		WHERE org_id = ? AND campaign_id = ? AND id = ? AND status = ? AND attempts = ?`,
		after.Status, after.Attempts, after.LastHangupCause, t.nextAttempt(after.NextAttemptAt), last, calls,
		t.time(after.UpdatedAt), after.OrgID, after.CampaignID, after.ID, before.Status, before.Attempts)
	if err != nil {
		return false, t.fail(err, "%s", what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.fail(err, "%s", what)
	}
	if n == 0 {
		return false, nil
	}
	if before.Status != after.Status {
		err := t.adjustCounts(ctx, after.OrgID, after.CampaignID, 0, map[string]int{before.Status: -1, after.Status: 1})
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// LiveRecipients joins the in_progress recipients to their last calls.
// A recipient whose call is missing (never created, or gone with a
// restored backup) comes with CallStatus "", so the dispatcher still sees
// it rather than waiting on it forever.
func (t *tx) LiveRecipients(ctx context.Context, orgID, campaignID string) ([]store.RecipientCall, error) {
	if !uuids(orgID, campaignID) {
		return []store.RecipientCall{}, nil
	}
	scan := func(row rowScanner) (store.RecipientCall, error) {
		var rc store.RecipientCall
		var status *string
		dest := append(recipientDest(&rc.CampaignRecipient), &status, &rc.HangupCause, nullTimeDest{&rc.EndedAt})
		if err := row.Scan(dest...); err != nil {
			return rc, err
		}
		if status != nil {
			rc.CallStatus = *status
		}
		return rc, nil
	}
	return all(ctx, t, scan, "list live recipients of campaign "+campaignID,
		`SELECT `+recipientColumns+`, c.status, c.hangup_cause, c.ended_at
		FROM campaign_recipients r LEFT JOIN calls c ON c.org_id = r.org_id AND c.id = r.last_call_id
		WHERE r.org_id = ? AND r.campaign_id = ? AND r.status = '`+model.RecipientInProgress+`'
		ORDER BY r.id`, orgID, campaignID)
}

// FinishRecipients moves the recipients one from-status at a time, so each
// statement's row count is exactly what that status's count loses.
func (t *tx) FinishRecipients(ctx context.Context, orgID, campaignID string, from []string, to string, at time.Time) (int, error) {
	what := "finish recipients of campaign " + campaignID
	if !uuids(orgID, campaignID) {
		return 0, notFound("%s", what)
	}
	if err := checkStatus(to); err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	byStatus := map[string]int{}
	seen := map[string]bool{to: true} // moving to itself moves nothing
	moved := 0
	for _, s := range from {
		if seen[s] {
			continue
		}
		seen[s] = true
		if err := checkStatus(s); err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		res, err := t.exec(ctx, `UPDATE campaign_recipients SET status = ?, updated_at = ?
			WHERE org_id = ? AND campaign_id = ? AND status = ?`, to, t.time(at), orgID, campaignID, s)
		if err != nil {
			return 0, t.fail(err, "%s", what)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, t.fail(err, "%s", what)
		}
		byStatus[s] -= int(n)
		byStatus[to] += int(n)
		moved += int(n)
	}
	if moved == 0 {
		return 0, nil
	}
	return moved, t.adjustCounts(ctx, orgID, campaignID, 0, byStatus)
}
