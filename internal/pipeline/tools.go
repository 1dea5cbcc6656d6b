package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/telephony"
)

// The system tools, offered only when the agent enables them.
const (
	toolEndCall    = "end_call"
	toolPressDigit = "press_digit"
	toolTransfer   = "transfer_to_number"
)

// toolDefs are the functions the model may call in this conversation: the
// system tools the agent enables, then its enabled custom tools.
func (s *agentSide) toolDefs() []llm.Tool {
	a := s.agent
	var out []llm.Tool
	if on(a.EndCallEnabled) {
		out = append(out, llm.Tool{Name: toolEndCall,
			Description: or(a.EndCallRulesOverride, "End the call when the conversation is over: the caller said goodbye or asked to hang up. Say goodbye first."),
			Parameters:  map[string]any{"type": "object", "properties": map[string]any{}}})
	}
	if on(a.TransferEnabled) && len(a.TransferRoutes) > 0 {
		out = append(out, transferTool(a))
	}
	if on(a.PlayKeypadTouchToneEnabled) {
		out = append(out, llm.Tool{Name: toolPressDigit,
			Description: or(a.PlayKeypadTouchToneDescriptionOverride, "Press keys on the phone keypad (DTMF), e.g. to navigate an automated menu."),
			Parameters: map[string]any{
				"type": "object", "required": []any{"digits"},
				"properties": map[string]any{"digits": map[string]any{"type": "string", "pattern": "^[0-9*#A-D]{1,32}$",
					"description": "the keys to press, in order"}},
			}})
	}
	if s.messagingOn() {
		out = append(out, sendMessageTool(a))
	}
	if s.knowledgeMode() == "query_tool" {
		out = append(out, searchTool())
	}
	for _, t := range s.tools {
		out = append(out, customToolDef(t))
	}
	return out
}

// transferTool offers the agent's transfer routes: the model picks the
// destination whose condition the conversation meets.
func transferTool(a model.AgentConfig) llm.Tool {
	var numbers []any
	var routes []string
	for _, r := range a.TransferRoutes {
		numbers = append(numbers, r.ToNumber)
		routes = append(routes, fmt.Sprintf("%s when %s", r.ToNumber, r.Condition))
	}
	desc := "Transfer the caller to a person at one of these numbers, choosing the one whose condition is met: " +
		strings.Join(routes, "; ") + ". Tell the caller you are transferring them first."
	return llm.Tool{Name: toolTransfer, Description: or(a.TransferDescriptionOverride, desc), Parameters: map[string]any{
		"type": "object", "required": []any{"to_number"},
		"properties": map[string]any{"to_number": map[string]any{"type": "string", "enum": numbers,
			"description": "the destination, E.164"}},
	}}
}

// toolLine is what the system tools that act on the line do. A call's
// reply presses keys, transfers and texts for real; a text chat has no
// line and records what would have been done (textchat.go).
type toolLine interface {
	pressDigits(ctx context.Context, digits string) string
	// transfer hands the caller to toNumber, one of the agent's routes:
	// out is the model's result, transferred whether the caller is gone,
	// logged whether the tool entry is written already.
	transfer(ctx context.Context, toNumber string) (out string, transferred, logged bool)
	sendMessage(ctx context.Context, body string) string
}

// toolRecorder writes a tool call's transcript entry: from began, when
// the call was made, to its result.
type toolRecorder interface {
	toolRan(turnID string, c llm.ToolCall, output string, began time.Time)
}

// runTools runs the model's tool calls in order, the line's through l,
// records each, and returns their results for the history; again is
// whether the model should be asked to go on, endCause why the
// conversation ends after this turn ("" = it goes on).
func (s *agentSide) runTools(ctx context.Context, turnID string, calls []llm.ToolCall, l toolLine, rec toolRecorder) (results []llm.Message, again bool, endCause string) {
	for _, tc := range calls {
		var out string
		logged := false
		began := s.e.now()
		switch {
		case tc.Name == toolEndCall && on(s.agent.EndCallEnabled):
			out = "the call is ending"
			endCause = call.CauseEndCallTool
		case tc.Name == toolPressDigit && on(s.agent.PlayKeypadTouchToneEnabled):
			if digits, bad := digitsArg(tc.Arguments); bad != "" {
				out = bad
			} else {
				out = l.pressDigits(ctx, digits)
			}
			again = true
		case tc.Name == toolTransfer && on(s.agent.TransferEnabled):
			if to, bad := s.transferArg(tc.Arguments); bad != "" {
				out = bad
			} else {
				var transferred bool
				if out, transferred, logged = l.transfer(ctx, to); transferred {
					endCause = call.CauseTransferred
				}
			}
			again = endCause == ""
		case tc.Name == toolSendMessage && s.messagingOn():
			if body, bad := messageArg(tc.Arguments); bad != "" {
				out = bad
			} else {
				out = l.sendMessage(ctx, body)
			}
			again = true
		case tc.Name == toolSearchKnowledge && s.knowledgeMode() == "query_tool":
			out = s.searchKnowledge(ctx, turnID, tc.Arguments)
			again = true
		default:
			if t, ok := s.customTool(tc.Name); ok {
				out = s.callCustomTool(ctx, t, tc.Arguments)
			} else {
				out = "error: no tool named " + tc.Name
			}
			again = true
		}
		if !logged {
			rec.toolRan(turnID, tc, out, began)
		}
		results = append(results, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: out})
	}
	return results, again, endCause
}

// runTools runs the model's tool calls on the call's line; again is
// whether the model should be asked to go on.
func (r *reply) runTools(calls []llm.ToolCall) (results []llm.Message, again bool) {
	results, again, end := r.c.agentSide.runTools(r.ctx, r.turnID, calls, r, r.c.log)
	if end != "" {
		r.endCause = end
	}
	return results, again
}

// digitsArg is press_digit's keys, or why the arguments are wrong.
func digitsArg(args string) (digits, bad string) {
	var a struct {
		Digits string `json:"digits"`
	}
	if err := opt.Unmarshal([]byte(args), &a); err != nil || a.Digits == "" || len(a.Digits) > 32 {
		return "", "error: give the keys to press as {\"digits\": \"123#\"}"
	}
	return a.Digits, ""
}

// pressDigits plays the digits the model asked for (RFC 4733).
func (r *reply) pressDigits(ctx context.Context, digits string) string {
	if err := r.c.live.Session.SendDigits(ctx, digits); err != nil {
		return "error: " + err.Error()
	}
	return "pressed " + digits
}

// transferArg is transfer_to_number's destination, one of the agent's
// routes, or why the arguments are wrong.
func (s *agentSide) transferArg(args string) (toNumber, bad string) {
	var a struct {
		ToNumber string `json:"to_number"`
	}
	if err := opt.Unmarshal([]byte(args), &a); err != nil || a.ToNumber == "" {
		return "", `error: give the destination as {"to_number": "+15550001234"}`
	}
	for _, rt := range s.agent.TransferRoutes {
		if rt.ToNumber == a.ToNumber {
			return a.ToNumber, ""
		}
	}
	return "", "error: " + a.ToNumber + " is not one of the transfer destinations"
}

// transfer hands the caller to one of the agent's routes through the
// telephony layer, which writes the tool entry (logged = true) once it
// knows how it went. The caller cannot interrupt it.
func (r *reply) transfer(ctx context.Context, toNumber string) (out string, transferred, logged bool) {
	return r.transferWith(ctx, toNumber, deref(r.c.agent.TransferMode))
}

// transferWith is transfer in mode (cold, warm; "": cold).
func (r *reply) transferWith(ctx context.Context, toNumber, mode string) (out string, transferred, logged bool) {
	c := r.c
	began := c.e.now() // the transfer's entry spans it
	warm := telephony.WarmTransfer{TurnID: r.turnID, Record: func(e map[string]any) { c.log.append(e, span{began: began}) }}
	if mode == telephony.TransferWarm {
		warm.Speaker = speaker{c.e, c.agent, c.rate}
		warm.Summary = c.transferSummary(ctx, append(r.base[:len(r.base):len(r.base)], r.added...))
	}
	r.setPinned(true)
	defer r.setPinned(false)
	if err := c.live.Transfer(context.WithoutCancel(ctx), toNumber, mode, warm); err != nil {
		return "transfer failed: " + err.Error() + ". The caller is still with you.", false, c.live.CanTransfer()
	}
	return "transferred to " + toNumber, true, true
}

// systemPrompt is the agent's rendered prompt with what the model must know
// about the phone call.
func systemPrompt(c model.Call, a model.Agent) string {
	return c.Prompt + "\n\n" + phoneNote(c)
}

// phoneNote is what the model must know about speaking on the phone.
func phoneNote(c model.Call) string {
	return "You are speaking on a phone call (" + strings.ToLower(c.Direction) + "). " +
		"Answer in short spoken sentences, without lists, markdown or emoji."
}

func speed(a model.AgentConfig) float64 {
	if a.VoiceSpeed != nil {
		return *a.VoiceSpeed
	}
	return 1
}

func on(b *bool) bool { return b != nil && *b }

// or is *s when set and not empty, else def.
func or(s *string, def string) string {
	if s != nil && *s != "" {
		return *s
	}
	return def
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
