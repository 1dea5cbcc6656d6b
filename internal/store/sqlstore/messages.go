package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const messageColumns = "id, org_id, agent_id, agent_name, messaging_connection_id, call_id, conversation_id, " +
	"channel, direction, from_number, to_number, body, status, provider_message_id, generated_by_llm, " +
	"error_message, created_at, updated_at, reply_due_at"

func scanMessage(r rowScanner) (model.Message, error) {
	var m model.Message
	err := r.Scan(&m.ID, &m.OrgID, &m.AgentID, &m.AgentName, &m.MessagingConnectionID, &m.CallID, &m.ConversationID,
		&m.Channel, &m.Direction, &m.FromNumber, &m.ToNumber, &m.Body, &m.Status, &m.ProviderMessageID, &m.GeneratedByLLM,
		&m.ErrorMessage, timeDest{&m.CreatedAt}, timeDest{&m.UpdatedAt}, nullTimeDest{&m.ReplyDueAt})
	return m, err
}

// messageOrder sorts messages by creation time then id (text ids: byte
// order, so both engines break ties alike), in dir.
func (t *tx) messageOrder(dir string) string {
	return fmt.Sprintf("created_at %s, %s %s", dir, t.d.ByteOrder("id"), dir)
}

// optionalUUIDs reports whether every id that is set is a UUID.
func optionalUUIDs(ids ...*string) bool {
	for _, id := range ids {
		if id != nil && !model.IsUUID(*id) {
			return false
		}
	}
	return true
}

// CreateMessage inserts the message; an organization that does not exist
// is ErrNotFound, and so are an agent or call id that is not a UUID (it can
// name none). The agent, connection and call are recorded, not referenced.
func (t *tx) CreateMessage(ctx context.Context, m *model.Message) error {
	if m.ID == "" {
		m.ID = model.NewMessageID()
	}
	m.CreatedAt, m.UpdatedAt = stamp(m.CreatedAt), stamp(m.UpdatedAt)
	if !uuids(m.OrgID) || !optionalUUIDs(m.AgentID, m.CallID) {
		return notFound("create message %s: organization %s, agent %v, call %v", m.ID, m.OrgID, m.AgentID, m.CallID)
	}
	_, err := t.exec(ctx, `INSERT INTO messages (`+messageColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.OrgID, m.AgentID, m.AgentName, m.MessagingConnectionID, m.CallID, m.ConversationID,
		m.Channel, m.Direction, m.FromNumber, m.ToNumber, m.Body, m.Status, m.ProviderMessageID, m.GeneratedByLLM,
		m.ErrorMessage, t.time(m.CreatedAt), t.time(m.UpdatedAt), t.nullTime(m.ReplyDueAt))
	if err != nil {
		return t.fail(err, "create message %s", m.ID)
	}
	return nil
}

func (t *tx) GetMessage(ctx context.Context, orgID, id string) (model.Message, error) {
	if !uuids(orgID) {
		return model.Message{}, notFound("get message %s", id)
	}
	return get(ctx, t, scanMessage, "get message "+id,
		`SELECT `+messageColumns+` FROM messages WHERE org_id = ? AND id = ?`, orgID, id)
}

// UpdateMessage writes the fields that change after a message is created:
// status, provider id, error, body, update time and reply due time.
func (t *tx) UpdateMessage(ctx context.Context, m *model.Message) error {
	if !uuids(m.OrgID) {
		return notFound("update message %s", m.ID)
	}
	m.UpdatedAt = stamp(m.UpdatedAt)
	if m.ReplyDueAt != nil {
		due := stamp(*m.ReplyDueAt)
		m.ReplyDueAt = &due
	}
	return t.change(ctx, "update message "+m.ID,
		`UPDATE messages SET status = ?, provider_message_id = ?, error_message = ?, body = ?, updated_at = ?, reply_due_at = ?
		WHERE org_id = ? AND id = ?`,
		m.Status, m.ProviderMessageID, m.ErrorMessage, m.Body, t.time(m.UpdatedAt), t.nullTime(m.ReplyDueAt), m.OrgID, m.ID)
}

// DueReplies returns, most overdue first, up to limit inbound messages of
// any organization whose reply was due at or before now.
func (t *tx) DueReplies(ctx context.Context, now time.Time, limit int) ([]model.Message, error) {
	return all(ctx, t, scanMessage, "due replies",
		`SELECT `+messageColumns+` FROM messages WHERE reply_due_at IS NOT NULL AND reply_due_at <= ?
		ORDER BY reply_due_at, `+t.d.ByteOrder("id")+` LIMIT ?`, t.time(now), limit)
}

// ClaimReply moves an overdue reply's due time to until, so that only the
// caller answers it; false when it was not due at now (another server
// claimed it, or it was answered).
func (t *tx) ClaimReply(ctx context.Context, orgID, id string, now, until time.Time) (bool, error) {
	if !uuids(orgID) {
		return false, nil
	}
	res, err := t.exec(ctx, `UPDATE messages SET reply_due_at = ?
		WHERE org_id = ? AND id = ? AND reply_due_at IS NOT NULL AND reply_due_at <= ?`, t.time(until), orgID, id, t.time(now))
	if err != nil {
		return false, t.fail(err, "claim the reply to %s", id)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim the reply to %s: rows affected: %w", id, err)
	}
	return n == 1, nil
}

func (t *tx) MessageByProviderID(ctx context.Context, orgID, providerID string) (model.Message, error) {
	if !uuids(orgID) {
		return model.Message{}, notFound("get message by provider id %s", providerID)
	}
	return get(ctx, t, scanMessage, "get message by provider id "+providerID,
		`SELECT `+messageColumns+` FROM messages WHERE org_id = ? AND provider_message_id = ?
		ORDER BY `+t.messageOrder("DESC")+` LIMIT 1`, orgID, providerID)
}

// ListMessages filters the organization's messages as f says. The folder
// filter looks at the message's agent as it is now, so messages whose agent
// was deleted (or that have none) never match it, not even FolderNone.
func (t *tx) ListMessages(ctx context.Context, orgID string, f store.MessageFilter) ([]model.Message, int, error) {
	none := func() ([]model.Message, int, error) { return []model.Message{}, 0, nil }
	if !uuids(orgID) {
		return none()
	}
	where, args := "m.org_id = ?", []any{orgID}
	if f.AgentID != "" {
		if !uuids(f.AgentID) {
			return none()
		}
		where += " AND m.agent_id = ?"
		args = append(args, f.AgentID)
	}
	if f.FolderID != "" {
		clause, fargs, ok := inFolder("m.agent_id", orgID, f.FolderID)
		if !ok {
			return none()
		}
		where += clause
		args = append(args, fargs...)
	}
	if f.CallID != "" {
		if !uuids(f.CallID) {
			return none()
		}
		where += " AND m.call_id = ?"
		args = append(args, f.CallID)
	}
	if f.Direction != "" {
		where += " AND m.direction = ?"
		args = append(args, f.Direction)
	}
	if f.Status != "" {
		where += " AND m.status = ?"
		args = append(args, f.Status)
	}
	return list(ctx, t, listing{
		columns: messageColumns,
		from:    "messages m",
		where:   where,
		args:    args,
		order:   t.messageOrder(direction(f.SortDir)),
		page:    f.Page,
	}, scanMessage, "list messages")
}

// ConversationMessages reads the newest limit messages of the thread and
// gives them oldest first.
func (t *tx) ConversationMessages(ctx context.Context, orgID, conversationID string, limit int) ([]model.Message, error) {
	if !uuids(orgID) || limit <= 0 {
		return []model.Message{}, nil
	}
	out, err := all(ctx, t, scanMessage, "list conversation "+conversationID,
		`SELECT `+messageColumns+` FROM messages WHERE org_id = ? AND conversation_id = ?
		ORDER BY `+t.messageOrder("DESC")+` LIMIT ?`, orgID, conversationID, limit)
	if err != nil {
		return nil, err
	}
	slices.Reverse(out)
	return out, nil
}

// LastMessageBetween finds the newest message the agent received from
// counterpart or sent to it.
func (t *tx) LastMessageBetween(ctx context.Context, orgID, agentID, counterpart string) (model.Message, error) {
	if !uuids(orgID, agentID) {
		return model.Message{}, notFound("last message of agent %s with %s", agentID, counterpart)
	}
	return get(ctx, t, scanMessage, fmt.Sprintf("last message of agent %s with %s", agentID, counterpart),
		`SELECT `+messageColumns+` FROM messages WHERE org_id = ? AND agent_id = ?
		AND ((direction = '`+model.Inbound+`' AND from_number = ?) OR (direction = '`+model.Outbound+`' AND to_number = ?))
		ORDER BY `+t.messageOrder("DESC")+` LIMIT 1`, orgID, agentID, counterpart, counterpart)
}

// CountMessagesSince counts the organization's outbound messages created at
// or after since (to toNumber when set); a zero since counts them all.
func (t *tx) CountMessagesSince(ctx context.Context, orgID, toNumber string, since time.Time) (int, error) {
	if !uuids(orgID) {
		return 0, nil
	}
	query := `SELECT count(*) FROM messages WHERE org_id = ? AND direction = '` + model.Outbound + `'`
	args := []any{orgID}
	if !since.IsZero() {
		// Stored times are whole milliseconds: the first one at or after
		// since is since rounded up.
		from := stamp(since)
		if from.Before(since) {
			from = from.Add(time.Millisecond)
		}
		query += " AND created_at >= ?"
		args = append(args, t.d.Time(from))
	}
	if toNumber != "" {
		query += " AND to_number = ?"
		args = append(args, toNumber)
	}
	return t.count(ctx, "count messages", query, args...)
}

// SetOptOut inserts or refreshes the number's opt-out of the connection; a
// connection of another organization is ErrNotFound.
func (t *tx) SetOptOut(ctx context.Context, orgID, connID, number, keyword string, at time.Time) error {
	if !uuids(orgID) {
		return notFound("opt-out of %s from %s", number, connID)
	}
	if _, err := t.GetMessagingConnection(ctx, orgID, connID); err != nil {
		return err
	}
	_, err := t.exec(ctx, `INSERT INTO message_opt_outs (org_id, messaging_connection_id, number, keyword, created_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (org_id, messaging_connection_id, number) DO UPDATE SET keyword = excluded.keyword, created_at = excluded.created_at`,
		orgID, connID, number, keyword, t.time(at))
	if err != nil {
		return t.fail(err, "opt-out of %s from %s", number, connID)
	}
	return nil
}

func (t *tx) ClearOptOut(ctx context.Context, orgID, connID, number string) error {
	if !uuids(orgID) {
		return nil
	}
	_, err := t.exec(ctx, `DELETE FROM message_opt_outs WHERE org_id = ? AND messaging_connection_id = ? AND number = ?`,
		orgID, connID, number)
	if err != nil {
		return t.fail(err, "opt-in of %s to %s", number, connID)
	}
	return nil
}

func (t *tx) OptOutKeyword(ctx context.Context, orgID, connID, number string) (string, error) {
	if !uuids(orgID) {
		return "", notFound("opt-out of %s from %s", number, connID)
	}
	return get(ctx, t, func(r rowScanner) (string, error) {
		var k string
		return k, r.Scan(&k)
	}, "opt-out of "+number+" from "+connID,
		`SELECT keyword FROM message_opt_outs WHERE org_id = ? AND messaging_connection_id = ? AND number = ?`, orgID, connID, number)
}
