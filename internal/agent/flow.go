package agent

import (
	"errors"

	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
)

// checkFlow checks the flowDefinition of an agent in mode
// conversation_flow against the flow format and the agent's custom tools
// (toolNames). A single_prompt agent's definition is kept as given: it
// never runs, and may be a draft. A flow agent may be stored without a
// definition while it is being built; its calls fail, saying so.
func checkFlow(in *Input, mode string, toolNames []string, l *invalid.List) {
	if mode == model.ModeConversationFlow && in.FlowDefinition.Present() {
		flow.Check(in.FlowDefinition.V, toolNames, "flowDefinition", l)
	}
}

// MaxCustomTools bounds the custom tools created with an agent.
const MaxCustomTools = 64

// checkNewTools checks the custom tools created with an agent, each under
// its index ("customTools[1].webhookUrl"), and returns their names.
func checkNewTools(tools []ToolInput, l *invalid.List) []string {
	if len(tools) > MaxCustomTools {
		l.Add("customTools", "must have at most %d elements", MaxCustomTools)
	}
	var names []string
	first := map[string]int{}
	for i := range tools {
		at := invalid.Index("customTools", i)
		var tl invalid.List
		checkTool(&tools[i], true, &tl)
		var bad *invalid.Error
		if errors.As(tl.Err(), &bad) {
			for _, f := range bad.Fields {
				l.Add(at+"."+f.Name, "%s", f.Message)
			}
		}
		if !tools[i].Name.Present() {
			continue
		}
		name := tools[i].Name.V
		if j, dup := first[name]; dup {
			l.Add(at+".name", "is also the name of %s", invalid.Index("customTools", j))
			continue
		}
		first[name] = i
		names = append(names, name)
	}
	return names
}

func toolNames(tools []model.CustomTool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
