package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
)

const customToolColumns = "id, org_id, agent_id, name, description, webhook_url, enabled, schema, headers, " +
	"query_params, send_raw_request_body, timeout_seconds, created_at, updated_at"

func scanCustomTool(r rowScanner) (model.CustomTool, error) {
	var c model.CustomTool
	err := r.Scan(&c.ID, &c.OrgID, &c.AgentID, &c.Name, &c.Description, &c.WebhookURL, &c.Enabled,
		documentDest{&c.Schema}, documentDest{&c.Headers}, documentDest{&c.QueryParams},
		&c.SendRawRequestBody, &c.TimeoutSeconds, timeDest{&c.CreatedAt}, timeDest{&c.UpdatedAt})
	return c, err
}

// customToolDocuments encodes the tool's JSON columns.
func customToolDocuments(c *model.CustomTool) (schema, headers, queryParams string, err error) {
	if schema, err = document(c.Schema); err != nil {
		return
	}
	if headers, err = document(c.Headers); err != nil {
		return
	}
	queryParams, err = document(c.QueryParams)
	return
}

// CreateCustomTool inserts the tool; a name the agent already uses is
// ErrConflict, an agent outside the organization ErrNotFound.
func (t *tx) CreateCustomTool(ctx context.Context, c *model.CustomTool) error {
	if c.ID == "" {
		c.ID = model.NewID()
	}
	c.CreatedAt, c.UpdatedAt = stamp(c.CreatedAt), stamp(c.UpdatedAt)
	schema, headers, queryParams, err := customToolDocuments(c)
	if err != nil {
		return t.fail(err, "create custom tool %s", c.Name)
	}
	_, err = t.exec(ctx, `INSERT INTO custom_tools (`+customToolColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.OrgID, c.AgentID, c.Name, c.Description, c.WebhookURL, c.Enabled, schema, headers,
		queryParams, c.SendRawRequestBody, c.TimeoutSeconds, t.time(c.CreatedAt), t.time(c.UpdatedAt))
	if err != nil {
		return t.fail(err, "create custom tool %s", c.Name)
	}
	return nil
}

func (t *tx) GetCustomTool(ctx context.Context, orgID, agentID, id string) (model.CustomTool, error) {
	if !uuids(orgID, agentID, id) {
		return model.CustomTool{}, notFound("get custom tool %s", id)
	}
	return get(ctx, t, scanCustomTool, "get custom tool "+id,
		`SELECT `+customToolColumns+` FROM custom_tools WHERE org_id = ? AND agent_id = ? AND id = ?`,
		orgID, agentID, id)
}

func (t *tx) ListCustomTools(ctx context.Context, orgID string, agentIDs []string) (map[string][]model.CustomTool, error) {
	out := map[string][]model.CustomTool{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(agentIDs, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanCustomTool, "list custom tools",
			`SELECT `+customToolColumns+` FROM custom_tools WHERE org_id = ? AND agent_id IN (`+marks+`)
			ORDER BY created_at, id`,
			append([]any{orgID}, batch...)...)
		for _, c := range found {
			out[c.AgentID] = append(out[c.AgentID], c)
		}
		return err
	})
	return out, err
}

func (t *tx) UpdateCustomTool(ctx context.Context, c *model.CustomTool) error {
	if !uuids(c.OrgID, c.AgentID, c.ID) {
		return notFound("update custom tool %s", c.ID)
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	schema, headers, queryParams, err := customToolDocuments(c)
	if err != nil {
		return t.fail(err, "update custom tool %s", c.ID)
	}
	return t.change(ctx, "update custom tool "+c.ID,
		`UPDATE custom_tools SET name = ?, description = ?, webhook_url = ?, enabled = ?, schema = ?, headers = ?,
			query_params = ?, send_raw_request_body = ?, timeout_seconds = ?, updated_at = ?
		WHERE org_id = ? AND agent_id = ? AND id = ?`,
		c.Name, c.Description, c.WebhookURL, c.Enabled, schema, headers,
		queryParams, c.SendRawRequestBody, c.TimeoutSeconds, t.time(c.UpdatedAt), c.OrgID, c.AgentID, c.ID)
}

func (t *tx) DeleteCustomTool(ctx context.Context, orgID, agentID, id string) error {
	if !uuids(orgID, agentID, id) {
		return notFound("delete custom tool %s", id)
	}
	return t.change(ctx, "delete custom tool "+id,
		`DELETE FROM custom_tools WHERE org_id = ? AND agent_id = ? AND id = ?`, orgID, agentID, id)
}
