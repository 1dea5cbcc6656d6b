package pipeline

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// A call's reply is a flow's turn on the phone (flowIO): it speaks, acts
// on the line and writes the call's transcript.

func (r *reply) sayLine(text string) bool {
	s := r.setSpeech(preparedSpeech(r.ctx, r.c, r.turnID, r.lat))
	r.say(llm.Message{Role: llm.RoleAssistant, Content: text})
	s.add(text)
	s.close()
	s.synthesize() // until it has played, or is stopped
	r.mute = s.failure()
	return r.mute == nil && r.ctx.Err() == nil
}

func (r *reply) answer(req func([]llm.Message) llm.Request, decided func()) (string, bool) {
	to := r.rounds(req, decided)
	return to, r.failed == nil && r.mute == nil && r.ctx.Err() == nil
}

func (r *reply) transferTo(ctx context.Context, toNumber, mode string) (string, bool) {
	out, transferred, logged := r.transferWith(ctx, toNumber, mode)
	if !logged {
		args, _ := json.Marshal(map[string]string{"to_number": toNumber})
		r.record(llm.ToolCall{ID: "flow-transfer", Name: toolTransfer, Arguments: string(args)}, out)
	}
	if transferred {
		r.endCause = call.CauseTransferred
	}
	return out, transferred
}

func (r *reply) note(msgs ...llm.Message) { r.added = append(r.added, msgs...) }

func (r *reply) history() []llm.Message { return append(r.base[:len(r.base):len(r.base)], r.added...) }

func (r *reply) record(c llm.ToolCall, output string) { r.c.log.tool(r.turnID, c, output) }

func (r *reply) end(cause string) { r.endCause = cause }

func (r *reply) at(n *flow.Node) {
	r.mu.Lock()
	r.node = n
	r.mu.Unlock()
}

// nodeInterruptible is the talking node's interruption setting (nil: the
// agent's).
func (r *reply) nodeInterruptible() *bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.node == nil {
		return nil
	}
	return r.node.Interruptible
}

// takeFlow takes back the flow a finished or interrupted turn moved.
func (c *conversation) takeFlow(r *reply) {
	if r.flow != nil {
		c.flow = r.flow
	}
}

// callerSpoke: the history ends with the caller's words (not one of the
// engine's notes to the model, which are in parentheses).
func callerSpoke(history []llm.Message) bool {
	if len(history) == 0 {
		return false
	}
	m := history[len(history)-1]
	return m.Role == llm.RoleUser && !strings.HasPrefix(m.Content, "(")
}

// offeredTargets are the nodes req's flow_transition offers.
func offeredTargets(req llm.Request) []choice {
	for _, t := range req.Tools {
		if t.Name != toolTransition {
			continue
		}
		props, _ := t.Parameters["properties"].(map[string]any)
		target, _ := props["target"].(map[string]any)
		enum, _ := target["enum"].([]any)
		var out []choice
		for _, e := range enum {
			if s, ok := e.(string); ok {
				out = append(out, choice{target: s})
			}
		}
		return out
	}
	return nil
}

// takeTransition splits the model's flow_transition call (moved, nil if
// none) from its other tool calls; to is the node it chose among offered
// ("": none it was offered).
func takeTransition(calls []llm.ToolCall, offered []choice) (rest []llm.ToolCall, moved *llm.ToolCall, to string) {
	i := slices.IndexFunc(calls, func(c llm.ToolCall) bool { return c.Name == toolTransition })
	if i < 0 || offered == nil {
		return calls, nil, ""
	}
	m := calls[i]
	rest = append(slices.Clone(calls[:i]), calls[i+1:]...)
	return rest, &m, transitionTarget([]llm.ToolCall{m}, offered)
}

// transitionResult answers the model's flow_transition call in the
// history.
func transitionResult(c llm.ToolCall, to string) llm.Message {
	out := "moved to " + to
	if to == "" {
		out = "error: that is not one of the steps offered"
	}
	return llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: out}
}
