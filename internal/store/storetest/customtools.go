package storetest

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var customToolTests = []test{
	{"CreateGet", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		c := newCustomTool(t, b, b.org.ID, a.ID, func(c *model.CustomTool) {
			c.Description = ptr("Looks up an order.")
			c.Enabled = false
			c.Schema = map[string]any{
				"type":       "object",
				"properties": map[string]any{"orderId": map[string]any{"type": "string", "maxLength": 12.0}},
				"required":   []any{"orderId"},
			}
			c.Headers = []model.KeyValue{{Key: "Authorization", Value: "Bearer x"}, {Key: "X-Env", Value: "prod"}}
			c.QueryParams = []model.KeyValue{{Key: "v", Value: "2"}}
			c.SendRawRequestBody = true
			c.TimeoutSeconds = ptr(15)
		})
		got := read(t, b, func(tx store.Tx) (model.CustomTool, error) { return tx.GetCustomTool(b.ctx, b.org.ID, a.ID, c.ID) })
		wantEqual(t, c, got)
	}},
	{"NilAndEmptyDocuments", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		bare := newCustomTool(t, b, b.org.ID, a.ID, func(c *model.CustomTool) {
			c.Name, c.Schema, c.Headers, c.QueryParams = "bare", nil, nil, nil
		})
		empty := newCustomTool(t, b, b.org.ID, a.ID, func(c *model.CustomTool) {
			c.Name, c.Schema, c.Headers, c.QueryParams = "empty", map[string]any{}, []model.KeyValue{}, []model.KeyValue{}
		})
		for _, c := range []model.CustomTool{bare, empty} {
			got := read(t, b, func(tx store.Tx) (model.CustomTool, error) { return tx.GetCustomTool(b.ctx, b.org.ID, a.ID, c.ID) })
			wantEqual(t, c, got)
		}
	}},
	{"DuplicateName", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		other := newAgent(t, b, b.org.ID)
		c := newCustomTool(t, b, b.org.ID, a.ID)
		dup := model.CustomTool{OrgID: b.org.ID, AgentID: a.ID, Name: c.Name, WebhookURL: "https://example.com"}
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateCustomTool(b.ctx, &dup) }), store.ErrConflict)
		// The same name on another agent is fine; renaming onto a taken name is not.
		newCustomTool(t, b, b.org.ID, other.ID, func(x *model.CustomTool) { x.Name = c.Name })
		second := newCustomTool(t, b, b.org.ID, a.ID, func(x *model.CustomTool) { x.Name = "second" })
		second.Name = c.Name
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateCustomTool(b.ctx, &second) }), store.ErrConflict)
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		b2 := newAgent(t, b, b.org.ID)
		c := newCustomTool(t, b, b.org.ID, a.ID)
		for _, k := range []struct{ org, agent, id string }{
			{b.other.ID, a.ID, c.ID},        // another organization
			{b.org.ID, b2.ID, c.ID},         // another agent
			{b.org.ID, a.ID, model.NewID()}, // missing
			{b.org.ID, a.ID, "not-a-uuid"},  // malformed
			{b.org.ID, "not-a-uuid", c.ID},  // malformed agent
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.CustomTool, error) { return tx.GetCustomTool(b.ctx, k.org, k.agent, k.id) }), store.ErrNotFound)
			u := c
			u.OrgID, u.AgentID, u.ID, u.Name = k.org, k.agent, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateCustomTool(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteCustomTool(b.ctx, k.org, k.agent, k.id) }), store.ErrNotFound)
		}
		got := read(t, b, func(tx store.Tx) (map[string][]model.CustomTool, error) {
			return tx.ListCustomTools(b.ctx, b.other.ID, []string{a.ID})
		})
		wantEqual(t, map[string][]model.CustomTool{}, got)
		// A tool for another organization's agent is refused.
		theirs := newAgent(t, b, b.other.ID)
		x := model.CustomTool{OrgID: b.org.ID, AgentID: theirs.ID, Name: "x", WebhookURL: "https://example.com"}
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateCustomTool(b.ctx, &x) }), store.ErrNotFound)
	}},
	{"UpdateDelete", func(t *testing.T, b *bundle) {
		a := newAgent(t, b, b.org.ID)
		c := newCustomTool(t, b, b.org.ID, a.ID)
		c.Name = "renamed"
		c.Description = ptr("now described")
		c.Enabled = false
		c.Headers = []model.KeyValue{{Key: "k", Value: "v"}}
		c.TimeoutSeconds = ptr(3)
		c.UpdatedAt = at(9)
		b.update(t, func(tx store.Tx) error { return tx.UpdateCustomTool(b.ctx, &c) })
		got := read(t, b, func(tx store.Tx) (model.CustomTool, error) { return tx.GetCustomTool(b.ctx, b.org.ID, a.ID, c.ID) })
		wantEqual(t, c, got)
		b.update(t, func(tx store.Tx) error { return tx.DeleteCustomTool(b.ctx, b.org.ID, a.ID, c.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.CustomTool, error) { return tx.GetCustomTool(b.ctx, b.org.ID, a.ID, c.ID) }), store.ErrNotFound)
	}},
	{"ListPerAgentInCreationOrder", func(t *testing.T, b *bundle) {
		a1 := newAgent(t, b, b.org.ID)
		a2 := newAgent(t, b, b.org.ID)
		idle := newAgent(t, b, b.org.ID)
		t3 := newCustomTool(t, b, b.org.ID, a1.ID, func(c *model.CustomTool) { c.Name, c.CreatedAt = "c", at(3) })
		t1 := newCustomTool(t, b, b.org.ID, a1.ID, func(c *model.CustomTool) { c.Name, c.CreatedAt = "a", at(1) })
		t2 := newCustomTool(t, b, b.org.ID, a1.ID, func(c *model.CustomTool) { c.Name, c.CreatedAt = "b", at(2) })
		u1 := newCustomTool(t, b, b.org.ID, a2.ID, func(c *model.CustomTool) { c.Name = "only" })
		got := read(t, b, func(tx store.Tx) (map[string][]model.CustomTool, error) {
			return tx.ListCustomTools(b.ctx, b.org.ID, []string{a1.ID, a2.ID, idle.ID, a1.ID, "not-a-uuid"})
		})
		wantEqual(t, map[string][]model.CustomTool{a1.ID: {t1, t2, t3}, a2.ID: {u1}}, got)
		none := read(t, b, func(tx store.Tx) (map[string][]model.CustomTool, error) {
			return tx.ListCustomTools(b.ctx, b.org.ID, nil)
		})
		wantEqual(t, map[string][]model.CustomTool{}, none)
	}},
}
