package sqlstore

import (
	"context"
	"fmt"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const messagingConnectionColumns = "id, org_id, name, provider, base_url, account_sid, auth_token, " +
	"from_number, messaging_service_sid, created_at, updated_at"

func scanMessagingConnection(r rowScanner) (model.MessagingConnection, error) {
	var c model.MessagingConnection
	err := r.Scan(&c.ID, &c.OrgID, &c.Name, &c.Provider, &c.BaseURL, &c.AccountSID, &c.AuthToken,
		&c.FromNumber, &c.MessagingServiceSID, timeDest{&c.CreatedAt}, timeDest{&c.UpdatedAt})
	return c, err
}

// messagingConnectionPrefix starts a new connection's id; these ids are
// opaque strings, not UUIDs.
const messagingConnectionPrefix = "mc"

func (t *tx) CreateMessagingConnection(ctx context.Context, c *model.MessagingConnection) error {
	if c.ID == "" {
		c.ID = model.NewPrefixedID(messagingConnectionPrefix)
	}
	c.CreatedAt, c.UpdatedAt = stamp(c.CreatedAt), stamp(c.UpdatedAt)
	_, err := t.exec(ctx, `INSERT INTO messaging_connections (`+messagingConnectionColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.OrgID, c.Name, c.Provider, c.BaseURL, c.AccountSID, secret(c.AuthToken),
		c.FromNumber, c.MessagingServiceSID, t.time(c.CreatedAt), t.time(c.UpdatedAt))
	if err != nil {
		return t.fail(err, "create messaging connection %s", c.ID)
	}
	return nil
}

func (t *tx) GetMessagingConnection(ctx context.Context, orgID, id string) (model.MessagingConnection, error) {
	if !uuids(orgID) {
		return model.MessagingConnection{}, notFound("get messaging connection %s", id)
	}
	return get(ctx, t, scanMessagingConnection, "get messaging connection "+id,
		`SELECT `+messagingConnectionColumns+` FROM messaging_connections WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) ListMessagingConnections(ctx context.Context, orgID string, p store.Page) ([]model.MessagingConnection, int, error) {
	if !uuids(orgID) {
		return []model.MessagingConnection{}, 0, nil
	}
	dir := direction(p.SortDir)
	return list(ctx, t, listing{
		columns: messagingConnectionColumns,
		from:    "messaging_connections",
		where:   "org_id = ?",
		args:    []any{orgID},
		// Text ids: byte order, so both engines break ties alike.
		order: fmt.Sprintf("created_at %s, %s %s", dir, t.d.ByteOrder("id"), dir),
		page:  p,
	}, scanMessagingConnection, "list messaging connections")
}

func (t *tx) UpdateMessagingConnection(ctx context.Context, c *model.MessagingConnection) error {
	if !uuids(c.OrgID) {
		return notFound("update messaging connection %s", c.ID)
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	return t.change(ctx, "update messaging connection "+c.ID,
		`UPDATE messaging_connections SET name = ?, provider = ?, base_url = ?, account_sid = ?, auth_token = ?,
			from_number = ?, messaging_service_sid = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`,
		c.Name, c.Provider, c.BaseURL, c.AccountSID, secret(c.AuthToken),
		c.FromNumber, c.MessagingServiceSID, t.time(c.UpdatedAt), c.OrgID, c.ID)
}

// DeleteMessagingConnection deletes the connection; the schema unassigns it
// from agents.
func (t *tx) DeleteMessagingConnection(ctx context.Context, orgID, id string) error {
	if !uuids(orgID) {
		return notFound("delete messaging connection %s", id)
	}
	return t.change(ctx, "delete messaging connection "+id,
		`DELETE FROM messaging_connections WHERE org_id = ? AND id = ?`, orgID, id)
}
