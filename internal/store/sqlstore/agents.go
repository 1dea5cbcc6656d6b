package sqlstore

import (
	"context"
	"fmt"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const agentColumns = "id, org_id, name, status, mode, folder_id, sip_trunk_id, messaging_connection_id, " +
	"config, simulated_caller, created_at, updated_at"

// visibleAgent is the condition every agent query but the call plane's
// adds: simulated callers (a test run's hidden agents) exist for their
// calls alone, so to the API they are unknown ids, and no inbound call can
// dial one.
const visibleAgent = " AND NOT simulated_caller"

func scanAgent(r rowScanner) (model.Agent, error) {
	var a model.Agent
	err := r.Scan(&a.ID, &a.OrgID, &a.Name, &a.Status, &a.Mode, &a.FolderID, &a.SIPTrunkID,
		&a.MessagingConnectionID, documentDest{&a.Config}, &a.SimulatedCaller, timeDest{&a.CreatedAt}, timeDest{&a.UpdatedAt})
	return a, err
}

// CreateAgent inserts the agent; a folder, trunk or messaging connection
// outside its organization is ErrNotFound.
func (t *tx) CreateAgent(ctx context.Context, a *model.Agent) error {
	if a.ID == "" {
		a.ID = model.NewID()
	}
	a.CreatedAt, a.UpdatedAt = stamp(a.CreatedAt), stamp(a.UpdatedAt)
	config, err := document(a.Config)
	if err != nil {
		return t.fail(err, "create agent %s", a.ID)
	}
	_, err = t.exec(ctx, `INSERT INTO agents (`+agentColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.OrgID, a.Name, a.Status, a.Mode, a.FolderID, a.SIPTrunkID, a.MessagingConnectionID,
		config, a.SimulatedCaller, t.time(a.CreatedAt), t.time(a.UpdatedAt))
	if err != nil {
		return t.fail(err, "create agent %s", a.ID)
	}
	return nil
}

func (t *tx) GetAgent(ctx context.Context, orgID, id string) (model.Agent, error) {
	if !uuids(orgID, id) {
		return model.Agent{}, notFound("get agent %s", id)
	}
	return get(ctx, t, scanAgent, "get agent "+id,
		`SELECT `+agentColumns+` FROM agents WHERE org_id = ? AND id = ?`+visibleAgent, orgID, id)
}

// GetCallAgent reads any agent of the organization, simulated callers
// included: the call plane's read of a call's own agent.
func (t *tx) GetCallAgent(ctx context.Context, orgID, id string) (model.Agent, error) {
	if !uuids(orgID, id) {
		return model.Agent{}, notFound("get agent %s", id)
	}
	return get(ctx, t, scanAgent, "get agent "+id,
		`SELECT `+agentColumns+` FROM agents WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) GetAgentByID(ctx context.Context, id string) (model.Agent, error) {
	if !uuids(id) {
		return model.Agent{}, notFound("get agent %s", id)
	}
	return get(ctx, t, scanAgent, "get agent "+id, `SELECT `+agentColumns+` FROM agents WHERE id = ?`+visibleAgent, id)
}

func (t *tx) GetAgents(ctx context.Context, orgID string, ids []string) ([]model.Agent, error) {
	out := []model.Agent{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(ids, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanAgent, "get agents",
			`SELECT `+agentColumns+` FROM agents WHERE org_id = ? AND id IN (`+marks+`)`+visibleAgent,
			append([]any{orgID}, batch...)...)
		out = append(out, found...)
		return err
	})
	return out, err
}

// ListAgents filters by status, folder and a case-insensitive name
// substring, and sorts by the filter's key with ties broken by id.
func (t *tx) ListAgents(ctx context.Context, orgID string, f store.AgentFilter) ([]model.Agent, int, error) {
	if !uuids(orgID) {
		return []model.Agent{}, 0, nil
	}
	where, args := "org_id = ?"+visibleAgent, []any{orgID}
	if f.Status != "" {
		where += " AND status = ?"
		args = append(args, f.Status)
	}
	switch f.FolderID {
	case "":
	case store.FolderNone:
		where += " AND folder_id IS NULL"
	default:
		if !uuids(f.FolderID) {
			return []model.Agent{}, 0, nil // no such folder, so no agents in it
		}
		where += " AND folder_id = ?"
		args = append(args, f.FolderID)
	}
	if f.Query != "" {
		where += ` AND lower(name) LIKE lower(?) ESCAPE '\'`
		args = append(args, "%"+escapeLike(f.Query)+"%")
	}
	dir := direction(f.SortDir)
	return list(ctx, t, listing{
		columns: agentColumns,
		from:    "agents",
		where:   where,
		args:    args,
		order:   fmt.Sprintf("%s %s, id %s", t.agentSortKey(f.SortBy), dir, dir),
		page:    f.Page,
	}, scanAgent, "list agents")
}

// agentSortKey is the column an agent list sorts by; names sort by their
// lower case, in byte order on both engines.
func (t *tx) agentSortKey(sortBy string) string {
	switch sortBy {
	case store.SortUpdatedAt:
		return "updated_at"
	case store.SortName:
		return t.d.ByteOrder("lower(name)")
	default:
		return "created_at"
	}
}

func (t *tx) UpdateAgent(ctx context.Context, a *model.Agent) error {
	if !uuids(a.OrgID, a.ID) {
		return notFound("update agent %s", a.ID)
	}
	a.UpdatedAt = stamp(a.UpdatedAt)
	config, err := document(a.Config)
	if err != nil {
		return t.fail(err, "update agent %s", a.ID)
	}
	return t.change(ctx, "update agent "+a.ID,
		`UPDATE agents SET name = ?, status = ?, mode = ?, folder_id = ?, sip_trunk_id = ?,
			messaging_connection_id = ?, config = ?, updated_at = ?
		WHERE org_id = ? AND id = ?`+visibleAgent,
		a.Name, a.Status, a.Mode, a.FolderID, a.SIPTrunkID, a.MessagingConnectionID, config,
		t.time(a.UpdatedAt), a.OrgID, a.ID)
}

// DeleteAgent deletes the agent with its custom tools and knowledge-base
// assignments; the schema unassigns its phone numbers.
func (t *tx) DeleteAgent(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete agent %s", id)
	}
	return t.change(ctx, "delete agent "+id,
		`DELETE FROM agents WHERE org_id = ? AND id = ?`+visibleAgent, orgID, id)
}

// DeleteSimulatedCaller deletes a simulated caller (its test attempt is
// over) as DeleteAgent deletes an agent; any other agent is ErrNotFound.
func (t *tx) DeleteSimulatedCaller(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete simulated caller %s", id)
	}
	return t.change(ctx, "delete simulated caller "+id,
		`DELETE FROM agents WHERE org_id = ? AND id = ? AND simulated_caller`, orgID, id)
}

// SetAgentKnowledgeBases replaces the agent's assignments. A knowledge base
// outside the organization is ErrNotFound (the composite foreign key refuses
// it).
func (t *tx) SetAgentKnowledgeBases(ctx context.Context, orgID, agentID string, kbIDs []string) error {
	what := "set knowledge bases of agent " + agentID
	if !uuids(orgID, agentID) {
		return notFound("%s", what)
	}
	for _, id := range kbIDs {
		if !uuids(id) {
			return notFound("%s: knowledge base %s", what, id)
		}
	}
	var exists int
	err := t.queryRow(ctx, `SELECT 1 FROM agents WHERE org_id = ? AND id = ?`+visibleAgent, orgID, agentID).Scan(&exists)
	if err != nil {
		return t.fail(err, "%s", what)
	}
	if _, err := t.exec(ctx, `DELETE FROM agent_knowledge_bases WHERE org_id = ? AND agent_id = ?`, orgID, agentID); err != nil {
		return t.fail(err, "%s", what)
	}
	seen := make(map[string]bool, len(kbIDs))
	for _, id := range kbIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		_, err := t.exec(ctx, `INSERT INTO agent_knowledge_bases (org_id, agent_id, knowledge_base_id) VALUES (?, ?, ?)`,
			orgID, agentID, id)
		if err != nil {
			return t.fail(err, "%s: knowledge base %s", what, id)
		}
	}
	return nil
}

// AgentKnowledgeBases returns each agent's knowledge bases by name then id;
// agents without any are absent from the map.
func (t *tx) AgentKnowledgeBases(ctx context.Context, orgID string, agentIDs []string) (map[string][]model.KnowledgeBaseRef, error) {
	out := map[string][]model.KnowledgeBaseRef{}
	if !uuids(orgID) {
		return out, nil
	}
	type link struct {
		agentID string
		ref     model.KnowledgeBaseRef
	}
	scan := func(r rowScanner) (link, error) {
		var l link
		err := r.Scan(&l.agentID, &l.ref.ID, &l.ref.Name)
		return l, err
	}
	err := uuidBatches(agentIDs, func(batch []any, marks string) error {
		found, err := all(ctx, t, scan, "list agents' knowledge bases",
			`SELECT akb.agent_id, kb.id, kb.name
			FROM agent_knowledge_bases akb
			JOIN knowledge_bases kb ON kb.org_id = akb.org_id AND kb.id = akb.knowledge_base_id
			WHERE akb.org_id = ? AND akb.agent_id IN (`+marks+`)
			ORDER BY `+t.d.ByteOrder("kb.name")+`, kb.id`,
			append([]any{orgID}, batch...)...)
		for _, l := range found {
			out[l.agentID] = append(out[l.agentID], l.ref)
		}
		return err
	})
	return out, err
}
