package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const phoneNumberColumns = "id, org_id, e164, sip_trunk_id, agent_id, created_at, updated_at"

func scanPhoneNumber(r rowScanner) (model.PhoneNumber, error) {
	var n model.PhoneNumber
	err := r.Scan(&n.ID, &n.OrgID, &n.E164, &n.SIPTrunkID, &n.AgentID, timeDest{&n.CreatedAt}, timeDest{&n.UpdatedAt})
	return n, err
}

// CreatePhoneNumber inserts the number; one already held by any
// organization is ErrConflict.
func (t *tx) CreatePhoneNumber(ctx context.Context, n *model.PhoneNumber) error {
	if n.ID == "" {
		n.ID = model.NewID()
	}
	n.CreatedAt, n.UpdatedAt = stamp(n.CreatedAt), stamp(n.UpdatedAt)
	_, err := t.exec(ctx, `INSERT INTO phone_numbers (`+phoneNumberColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		n.ID, n.OrgID, n.E164, n.SIPTrunkID, n.AgentID, t.time(n.CreatedAt), t.time(n.UpdatedAt))
	if err != nil {
		return t.fail(err, "create phone number %s", n.E164)
	}
	return nil
}

func (t *tx) GetPhoneNumber(ctx context.Context, orgID, id string) (model.PhoneNumber, error) {
	if !uuids(orgID, id) {
		return model.PhoneNumber{}, notFound("get phone number %s", id)
	}
	return get(ctx, t, scanPhoneNumber, "get phone number "+id,
		`SELECT `+phoneNumberColumns+` FROM phone_numbers WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) GetPhoneNumberByE164(ctx context.Context, e164 string) (model.PhoneNumber, error) {
	return get(ctx, t, scanPhoneNumber, "get phone number "+e164,
		`SELECT `+phoneNumberColumns+` FROM phone_numbers WHERE e164 = ?`, e164)
}

func (t *tx) ListPhoneNumbers(ctx context.Context, orgID string, f store.PhoneNumberFilter) ([]model.PhoneNumber, int, error) {
	if !uuids(orgID) || (f.AgentID != "" && !uuids(f.AgentID)) || (f.SIPTrunkID != "" && !uuids(f.SIPTrunkID)) {
		return []model.PhoneNumber{}, 0, nil
	}
	where, args := "org_id = ?", []any{orgID}
	if f.AgentID != "" {
		where += " AND agent_id = ?"
		args = append(args, f.AgentID)
	}
	if f.SIPTrunkID != "" {
		where += " AND sip_trunk_id = ?"
		args = append(args, f.SIPTrunkID)
	}
	return list(ctx, t, listing{
		columns: phoneNumberColumns,
		from:    "phone_numbers",
		where:   where,
		args:    args,
		order:   newestFirst(f.Page),
		page:    f.Page,
	}, scanPhoneNumber, "list phone numbers")
}

func (t *tx) AgentPhoneNumbers(ctx context.Context, orgID string, agentIDs []string) (map[string][]model.PhoneNumber, error) {
	out := map[string][]model.PhoneNumber{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(agentIDs, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanPhoneNumber, "list agents' phone numbers",
			`SELECT `+phoneNumberColumns+` FROM phone_numbers WHERE org_id = ? AND agent_id IN (`+marks+`)
			ORDER BY `+t.d.ByteOrder("e164")+`, id`,
			append([]any{orgID}, batch...)...)
		for _, n := range found {
			out[*n.AgentID] = append(out[*n.AgentID], n)
		}
		return err
	})
	return out, err
}

func (t *tx) UpdatePhoneNumber(ctx context.Context, n *model.PhoneNumber) error {
	if !uuids(n.OrgID, n.ID) {
		return notFound("update phone number %s", n.ID)
	}
	n.UpdatedAt = stamp(n.UpdatedAt)
	return t.change(ctx, "update phone number "+n.ID,
		`UPDATE phone_numbers SET e164 = ?, sip_trunk_id = ?, agent_id = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
		n.E164, n.SIPTrunkID, n.AgentID, t.time(n.UpdatedAt), n.OrgID, n.ID)
}

func (t *tx) DeletePhoneNumber(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete phone number %s", id)
	}
	return t.change(ctx, "delete phone number "+id,
		`DELETE FROM phone_numbers WHERE org_id = ? AND id = ?`, orgID, id)
}
