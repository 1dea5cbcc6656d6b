package pipeline

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// The system tools, offered only when the agent enables them.
const (
	toolEndCall    = "end_call"
	toolPressDigit = "press_digit"
)

func tools(a model.AgentConfig) []llm.Tool {
	var out []llm.Tool
	if a.EndCallEnabled != nil && *a.EndCallEnabled {
		desc := "End the call when the conversation is over: the caller said goodbye or asked to hang up. Say goodbye first."
		if a.EndCallRulesOverride != nil && *a.EndCallRulesOverride != "" {
			desc = *a.EndCallRulesOverride
		}
		out = append(out, llm.Tool{Name: toolEndCall, Description: desc,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	if a.PlayKeypadTouchToneEnabled != nil && *a.PlayKeypadTouchToneEnabled {
		desc := "Press keys on the phone keypad (DTMF), e.g. to navigate an automated menu."
		if a.PlayKeypadTouchToneDescriptionOverride != nil && *a.PlayKeypadTouchToneDescriptionOverride != "" {
			desc = *a.PlayKeypadTouchToneDescriptionOverride
		}
		out = append(out, llm.Tool{Name: toolPressDigit, Description: desc, Parameters: map[string]any{
			"type": "object", "required": []any{"digits"},
			"properties": map[string]any{"digits": map[string]any{"type": "string", "pattern": "^[0-9*#A-D]{1,32}$",
				"description": "the keys to press, in order"}},
		}})
	}
	return out
}

// runTools runs the model's tool calls; false when the call is ending or
// the model need not be asked again.
func (c *conversation) runTools(ctx context.Context, calls []llm.ToolCall) bool {
	again := false
	for _, tc := range calls {
		var out string
		switch tc.Name {
		case toolEndCall:
			out = "the call is ending"
			c.endCause = call.CauseEndCallTool
		case toolPressDigit:
			out = c.pressDigits(ctx, tc.Arguments)
			again = true
		default:
			out = "error: no tool named " + tc.Name
			again = true
		}
		c.log.tool(c.turnID(), tc, out)
		c.history = append(c.history, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: out})
	}
	return again && c.endCause == ""
}

// pressDigits plays the digits the model asked for (RFC 4733).
func (c *conversation) pressDigits(ctx context.Context, args string) string {
	var a struct {
		Digits string `json:"digits"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil || a.Digits == "" || len(a.Digits) > 32 {
		return "error: give the keys to press as {\"digits\": \"123#\"}"
	}
	if err := c.live.Session.SendDigits(ctx, a.Digits); err != nil {
		return "error: " + err.Error()
	}
	return "pressed " + a.Digits
}

// systemPrompt is the agent's rendered prompt with what the model must know
// about the phone call.
func systemPrompt(c model.Call, a model.Agent) string {
	var b strings.Builder
	b.WriteString(c.Prompt)
	b.WriteString("\n\nYou are speaking on a phone call (" + strings.ToLower(c.Direction) + "). ")
	b.WriteString("Answer in short spoken sentences, without lists, markdown or emoji.")
	return b.String()
}

func speed(a model.AgentConfig) float64 {
	if a.VoiceSpeed != nil {
		return *a.VoiceSpeed
	}
	return 1
}
