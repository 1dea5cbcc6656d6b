package pipeline

import (
	"strings"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// agentSide is what the agent brings to one conversation, a phone call's
// or a text chat's (textchat.go): its configuration, the call record it
// speaks on, its enabled custom tools and knowledge bases, and the metrics
// its model and retrievals count in. Both kinds of conversation build the
// model's requests, offer tools and run them through it, so a text chat's
// agent is the agent a caller would get.
type agentSide struct {
	e       *Engine
	agent   model.AgentConfig
	call    model.Call // the record the agent speaks on (a text chat's stand-in has no ID)
	tools   []model.CustomTool
	kbIDs   []string
	metrics *metrics
}

// request is the model request for msgs: the agent's model settings and
// the tools it is offered.
func (a *agentSide) request(msgs []llm.Message) llm.Request {
	return llm.Request{Model: a.e.Model, Messages: msgs, Tools: a.toolDefs(),
		Temperature: a.agent.LLMTemperature, ReasoningEffort: deref(a.agent.LLMReasoningEffort)}
}

// opening is how the agent opens a conversation per firstMessageMode:
// dynamic, a note asking the model to greet; otherwise the call's rendered
// first message. Neither: the caller speaks first.
func opening(c model.Call, a model.AgentConfig) (greetNote, firstMessage string) {
	switch {
	case deref(a.FirstMessageMode) == "dynamic":
		return "(The " + strings.ToLower(c.Direction) + " call has just been answered. Greet the caller.)", ""
	case c.FirstMessage != nil:
		return "", *c.FirstMessage
	}
	return "", ""
}
