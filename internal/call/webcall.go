package call

import "github.com/parley-voice/parley/internal/model"

// WebCaller is the fromNumber of a web call: a person talking to an agent
// from a browser (the dashboard's test call) rather than from a phone.
const WebCaller = "web"

// NewWebCall is the record of a web call to agent a: an inbound call from
// WebCaller to "agent-<id>" (as a SIP call dialed straight to the agent
// is), dialedAgentId set, with the agent's testVariables over its defaults
// and the system ones (they stand in for the pre-call webhook, which web
// calls do not call).
func NewWebCall(a model.Agent) model.Call {
	c := NewInbound(a, nil, WebCaller, "agent-"+a.ID, &a.ID)
	c.Variables = Merge(a.Config.DefaultVariables, SystemVariables(a, model.Inbound, c.FromNumber, c.ToNumber, model.Now()), a.Config.TestVariables)
	render(&c, a)
	return c
}
