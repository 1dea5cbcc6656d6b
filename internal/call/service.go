package call

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/suppression"
)

// MaxCallerIDNameLen is the longest callerIdName, in characters.
const MaxCallerIDNameLen = 15

// Input is a POST /calls request.
type Input struct {
	AgentID      opt.Field[string]         `json:"agentId"`
	ToNumber     opt.Field[string]         `json:"toNumber"`
	FromNumber   opt.Field[string]         `json:"fromNumber"`
	Variables    opt.Field[map[string]any] `json:"variables"`
	CallerIDName opt.Field[string]         `json:"callerIdName"`
	SkipQueue    opt.Field[bool]           `json:"skipQueue"`
}

func (in *Input) check(l *invalid.List) {
	if !in.AgentID.Present() {
		l.Add("agentId", "is required")
	} else if !model.IsUUID(in.AgentID.V) {
		l.Add("agentId", "must be a UUID")
	}
	for name, f := range map[string]opt.Field[string]{"toNumber": in.ToNumber, "fromNumber": in.FromNumber} {
		switch {
		case !f.Present():
			l.Add(name, "is required")
		case !invalid.IsE164(f.V):
			l.Add(name, "must be an E.164 number such as +14155550100")
		}
	}
	if in.CallerIDName.Present() {
		if n := invalid.Len(in.CallerIDName.V); n < 1 || n > MaxCallerIDNameLen {
			l.Add("callerIdName", "must be 1 to %d characters", MaxCallerIDNameLen)
		}
	}
	if in.SkipQueue.Null {
		l.Add("skipQueue", "must not be null")
	}
}

// Service builds and reads call records.
type Service struct {
	Store store.Store
}

// NewOutbound checks in and builds the outbound call it asks for: the
// agent's name and trunk, the merged variables, and the prompt and first
// message rendered from them. The call is not stored; the queue places it.
// An agent that does not exist in the organization, or is disabled, is a
// validation error naming agentId; a toNumber the organization suppresses
// (its do-not-call list) is a conflict.
func (s *Service) NewOutbound(ctx context.Context, orgID string, in Input) (model.Call, error) {
	var l invalid.List
	in.check(&l)
	var (
		a          model.Agent
		suppressed bool
	)
	err := s.Store.View(ctx, func(tx store.Tx) error {
		if !l.Has("agentId") {
			var err error
			a, err = tx.GetAgent(ctx, orgID, in.AgentID.V)
			switch {
			case errors.Is(err, store.ErrNotFound):
				l.Add("agentId", "names no agent in this organization")
			case err != nil:
				return err
			case a.Status != model.AgentActive:
				l.Add("agentId", "names a disabled agent")
			}
		}
		if !l.Has("toNumber") {
			var err error
			suppressed, err = suppression.IsSuppressed(ctx, tx, orgID, in.ToNumber.V)
			return err
		}
		return nil
	})
	if err != nil {
		return model.Call{}, err
	}
	if err := l.Err(); err != nil {
		return model.Call{}, err
	}
	if suppressed {
		return model.Call{}, &invalid.Conflict{Message: fmt.Sprintf(
			"toNumber %s is on the organization's do-not-call list (suppressions); nothing was placed", in.ToNumber.V)}
	}
	return Outbound(a, in.FromNumber.V, in.ToNumber.V, in.Variables.V, in.CallerIDName.Ptr()), nil
}

// Outbound builds the outbound call of agent a (read, and found active,
// by the caller) from from to to: the agent's name and trunk, its default
// variables merged with the system ones and vars, and the prompt and first
// message rendered from them. The call is not stored; the queue places it.
func Outbound(a model.Agent, from, to string, vars map[string]any, callerIDName *string) model.Call {
	c := model.Call{
		ID: model.NewID(), OrgID: a.OrgID, AgentID: a.ID, AgentName: a.Name, AgentCallerIDName: callerIDName,
		SIPTrunkID: a.SIPTrunkID, Direction: model.Outbound, FromNumber: from, ToNumber: to,
		Variables:  Merge(a.Config.DefaultVariables, SystemVariables(a, model.Outbound, from, to, model.Now()), vars),
		Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	render(&c, a)
	return c
}

// NewInbound is the record of an inbound call to agent a, from and to as
// the caller dialed; dialedAgentID is set when it was routed to
// agent-<uuid>. Its variables are the agent's defaults and the system
// ones until the pre-call webhook adds its own.
func NewInbound(a model.Agent, trunkID *string, from, to string, dialedAgentID *string) model.Call {
	now := model.Now()
	vars := Merge(a.Config.DefaultVariables, SystemVariables(a, model.Inbound, from, to, now), nil)
	c := model.Call{
		ID: model.NewID(), OrgID: a.OrgID, AgentID: a.ID, AgentName: a.Name, SIPTrunkID: trunkID,
		Direction: model.Inbound, FromNumber: from, ToNumber: to, DialedAgentID: dialedAgentID,
		Variables: vars, Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	render(&c, a)
	return c
}

// render fills the call's prompt and first message from the agent's
// templates and the call's variables.
func render(c *model.Call, a model.Agent) {
	c.Prompt = Render(a.Config.PromptTemplate, c.Variables)
	c.FirstMessage = nil
	if a.Config.FirstMessage != nil {
		m := Render(*a.Config.FirstMessage, c.Variables)
		c.FirstMessage = &m
	}
}

// Get returns one call.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.Call, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.Call, error) { return tx.GetCall(ctx, orgID, id) })
}

// RecordingOrg says which organization a call with a recording belongs
// to (store.ErrNotFound when there is no such call, or its recording was
// never made or was deleted by retention): for signed recording links,
// which name the call alone.
func (s *Service) RecordingOrg(ctx context.Context, id string) (string, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (string, error) { return tx.RecordingOrg(ctx, id) })
}

// List returns a page of calls and the number matching the filter.
func (s *Service) List(ctx context.Context, orgID string, f store.CallFilter) ([]model.Call, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.Call, int, error) { return tx.ListCalls(ctx, orgID, f) })
}

// BatchGet returns the calls among ids that exist in the organization, in
// the order asked, each once.
func (s *Service) BatchGet(ctx context.Context, orgID string, ids []string) ([]model.Call, error) {
	calls, err := store.Read(ctx, s.Store, func(tx store.Tx) ([]model.Call, error) { return tx.GetCalls(ctx, orgID, ids) })
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, id := range ids {
		if _, seen := order[id]; !seen {
			order[id] = i
		}
	}
	slices.SortFunc(calls, func(a, b model.Call) int { return order[a.ID] - order[b.ID] })
	return calls, nil
}
