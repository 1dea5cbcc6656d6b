package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Custom tool limits.
const (
	MaxToolDescriptionLen = 2000
	MaxToolKeyValues      = 50
	MaxToolTimeoutSeconds = 30
)

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// httpToken is RFC 9110's token, the grammar of a header name.
var httpToken = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// SystemToolNames are the tools Parley itself offers the model; a custom tool
// may not take one of these names.
var SystemToolNames = []string{"end_call", "transfer_to_number", "press_digit", "send_message", "search_knowledge_base"}

// ToolInput is a custom tool create or partial-update request.
type ToolInput struct {
	Name               opt.Field[string]           `json:"name"`
	Description        opt.Field[string]           `json:"description"`
	WebhookURL         opt.Field[string]           `json:"webhookUrl"`
	Enabled            opt.Field[bool]             `json:"enabled"`
	Schema             opt.Field[map[string]any]   `json:"schema"`
	Headers            opt.Field[[]model.KeyValue] `json:"headers"`
	QueryParams        opt.Field[[]model.KeyValue] `json:"queryParams"`
	SendRawRequestBody opt.Field[bool]             `json:"sendRawRequestBody"`
	TimeoutSeconds     opt.Field[int]              `json:"timeoutSeconds"`
}

func checkTool(in *ToolInput, creating bool, l *invalid.List) {
	for name, f := range map[string]presence{
		"name": {in.Name.Set, in.Name.Null}, "webhookUrl": {in.WebhookURL.Set, in.WebhookURL.Null},
		"enabled": {in.Enabled.Set, in.Enabled.Null}, "sendRawRequestBody": {in.SendRawRequestBody.Set, in.SendRawRequestBody.Null},
	} {
		if f.Set && f.Null {
			l.Add(name, "must not be null")
		}
	}
	if creating && !in.Name.Set {
		l.Add("name", "is required")
	}
	if creating && !in.WebhookURL.Set {
		l.Add("webhookUrl", "is required")
	}
	if in.Name.Present() {
		switch {
		case !toolName.MatchString(in.Name.V):
			l.Add("name", "must be 1 to 64 letters, digits, _ or -")
		case slices.Contains(SystemToolNames, in.Name.V):
			l.Add("name", "is the name of a system tool")
		}
	}
	httpURL(l, "webhookUrl", in.WebhookURL.V, in.WebhookURL.Present())
	maxLen(l, "description", in.Description.V, in.Description.Present(), MaxToolDescriptionLen)
	intRange(l, "timeoutSeconds", in.TimeoutSeconds.V, in.TimeoutSeconds.Present(), 1, MaxToolTimeoutSeconds)
	if in.Schema.Present() {
		if t, ok := in.Schema.V["type"]; ok && t != "object" {
			l.Add("schema.type", `must be "object": a tool takes an object of arguments`)
		}
		if p, ok := in.Schema.V["properties"]; ok {
			if _, isObj := p.(map[string]any); !isObj {
				l.Add("schema.properties", "must be an object")
			}
		}
	}
	checkKeyValues("headers", in.Headers, true, l)
	checkKeyValues("queryParams", in.QueryParams, false, l)
}

func checkKeyValues(name string, f opt.Field[[]model.KeyValue], header bool, l *invalid.List) {
	if !f.Present() {
		return
	}
	if len(f.V) > MaxToolKeyValues {
		l.Add(name, "must have at most %d elements", MaxToolKeyValues)
	}
	for i, kv := range f.V {
		p := invalid.Index(name, i)
		switch {
		case kv.Key == "":
			l.Add(p+".key", "is required")
		case header && !httpToken.MatchString(kv.Key):
			l.Add(p+".key", "must be a valid HTTP header name")
		}
		if header && containsLineBreak(kv.Value) {
			l.Add(p+".value", "must not contain line breaks")
		}
	}
}

func containsLineBreak(s string) bool {
	for _, r := range s {
		if r == '\r' || r == '\n' || r == 0 {
			return true
		}
	}
	return false
}

func applyTool(t *model.CustomTool, in *ToolInput) {
	if in.Name.Present() {
		t.Name = in.Name.V
	}
	if in.Description.Set {
		t.Description = in.Description.Ptr()
	}
	if in.WebhookURL.Present() {
		t.WebhookURL = in.WebhookURL.V
	}
	if in.Enabled.Present() {
		t.Enabled = in.Enabled.V
	}
	if in.Schema.Set {
		t.Schema = in.Schema.V
	}
	if t.Schema == nil {
		t.Schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if in.Headers.Set {
		t.Headers = in.Headers.V
	}
	if in.QueryParams.Set {
		t.QueryParams = in.QueryParams.V
	}
	if in.SendRawRequestBody.Present() {
		t.SendRawRequestBody = in.SendRawRequestBody.V
	}
	if in.TimeoutSeconds.Set {
		t.TimeoutSeconds = in.TimeoutSeconds.Ptr()
	}
	if t.Headers == nil {
		t.Headers = []model.KeyValue{}
	}
	if t.QueryParams == nil {
		t.QueryParams = []model.KeyValue{}
	}
}

// Tools lists an agent's custom tools in creation order.
func (s *Service) Tools(ctx context.Context, orgID, agentID string) ([]model.CustomTool, error) {
	var out []model.CustomTool
	err := s.Store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetAgent(ctx, orgID, agentID); err != nil {
			return err
		}
		tools, err := tx.ListCustomTools(ctx, orgID, []string{agentID})
		out = tools[agentID]
		return err
	})
	if out == nil {
		out = []model.CustomTool{}
	}
	return out, err
}

// CreateTool adds a custom tool to an agent. Tool names are unique per agent
// (the model calls tools by name): a repeat is store.ErrConflict.
func (s *Service) CreateTool(ctx context.Context, orgID, agentID string, in ToolInput) (model.CustomTool, error) {
	var l invalid.List
	checkTool(&in, true, &l)
	if err := l.Err(); err != nil {
		return model.CustomTool{}, err
	}
	now := model.Now()
	t := model.CustomTool{ID: model.NewID(), OrgID: orgID, AgentID: agentID, Enabled: true, CreatedAt: now, UpdatedAt: now}
	applyTool(&t, &in)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetAgent(ctx, orgID, agentID); err != nil {
			return err
		}
		return nameTaken(t.Name, tx.CreateCustomTool(ctx, &t))
	})
	return t, err
}

// createTools stores the custom tools given with a new agent, checked by
// checkNewTools.
func createTools(ctx context.Context, tx store.Tx, a model.Agent, in []ToolInput) error {
	for i := range in {
		t := model.CustomTool{ID: model.NewID(), OrgID: a.OrgID, AgentID: a.ID, Enabled: true, CreatedAt: a.CreatedAt, UpdatedAt: a.CreatedAt}
		applyTool(&t, &in[i])
		if err := nameTaken(t.Name, tx.CreateCustomTool(ctx, &t)); err != nil {
			return err
		}
	}
	return nil
}

// Tool returns one of an agent's custom tools.
func (s *Service) Tool(ctx context.Context, orgID, agentID, id string) (model.CustomTool, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.CustomTool, error) { return tx.GetCustomTool(ctx, orgID, agentID, id) })
}

// nameTaken turns the store's uniqueness conflict into one the caller can read.
func nameTaken(name string, err error) error {
	if errors.Is(err, store.ErrConflict) {
		return &invalid.Conflict{Message: fmt.Sprintf("the agent already has a custom tool named %q", name)}
	}
	return err
}

// UpdateTool applies a partial update to a custom tool.
func (s *Service) UpdateTool(ctx context.Context, orgID, agentID, id string, in ToolInput) (model.CustomTool, error) {
	var l invalid.List
	checkTool(&in, false, &l)
	if err := l.Err(); err != nil {
		return model.CustomTool{}, err
	}
	var t model.CustomTool
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if t, err = tx.GetCustomTool(ctx, orgID, agentID, id); err != nil {
			return err
		}
		applyTool(&t, &in)
		t.UpdatedAt = model.Now()
		return nameTaken(t.Name, tx.UpdateCustomTool(ctx, &t))
	})
	return t, err
}

// DeleteTool removes a custom tool.
func (s *Service) DeleteTool(ctx context.Context, orgID, agentID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		return tx.DeleteCustomTool(ctx, orgID, agentID, id)
	})
}
