package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// nodeRequest is the model request in the flow's current conversation
// node: the system prompt made of the agent's prompt, the global prompt,
// the node's instruction and what the flow knows so far; the tools the
// node allows plus flow_transition; the node's temperature.
func (s *agentSide) nodeRequest(fs *flowState, msgs []llm.Message) llm.Request {
	n := fs.node
	msgs = slices.Clone(msgs)
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		msgs[0] = llm.Message{Role: llm.RoleSystem, Content: s.flowPrompt(fs)}
	}
	req := s.request(msgs)
	if n.Tools != nil || (n.Knowledge != nil && !*n.Knowledge) {
		req.Tools = slices.DeleteFunc(req.Tools, func(t llm.Tool) bool {
			return (n.Tools != nil && !slices.Contains(n.Tools, t.Name)) || (t.Name == toolSearchKnowledge && !nodeKnowledge(n))
		})
	}
	t := flowTurnRun{fs: fs}
	if cs := t.choices(n); len(cs) > 0 {
		req.Tools = append(req.Tools, transitionTool(cs))
	}
	if n.Temperature != nil {
		req.Temperature = n.Temperature
	}
	return req
}

// nodeKnowledge: the agent's knowledge bases are used in node n.
func nodeKnowledge(n *flow.Node) bool { return n.Knowledge == nil || *n.Knowledge }

// flowPrompt is the system prompt in the current conversation node.
func (s *agentSide) flowPrompt(fs *flowState) string {
	var b strings.Builder
	b.WriteString(s.call.Prompt)
	if g := strings.TrimSpace(fs.render(fs.f.GlobalPrompt)); g != "" {
		b.WriteString("\n\n" + g)
	}
	if in := strings.TrimSpace(fs.render(fs.node.Instruction)); in != "" {
		b.WriteString("\n\nWhat to do now: " + in)
	}
	if len(fs.set) > 0 {
		keys := make([]string, 0, len(fs.set))
		for k, v := range fs.set {
			if _, obj := v.(map[string]any); !obj {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		b.WriteString("\n\nWhat you have learned so far:")
		for _, k := range keys {
			v, _ := json.Marshal(fs.set[k])
			b.WriteString("\n- " + k + ": " + string(v))
		}
	}
	b.WriteString("\n\n" + phoneNote(s.call))
	return b.String()
}

// transitionTool offers the model the nodes it may move to. Its
// description lists each with its condition: the model calls it instead
// of answering when one holds, and the next node answers.
func transitionTool(cs []choice) llm.Tool {
	var targets []any
	var lines []string
	for _, c := range cs {
		if !slices.Contains(targets, any(c.target)) {
			targets = append(targets, c.target)
		}
		lines = append(lines, fmt.Sprintf("- %s: %s", c.target, c.condition))
	}
	return llm.Tool{Name: toolTransition,
		Description: "Move the conversation to its next step as soon as one of these conditions holds (and only then); the next step answers the caller, so say nothing yourself when you call this:\n" + strings.Join(lines, "\n"),
		Parameters: map[string]any{"type": "object", "required": []any{"target"}, "additionalProperties": false,
			"properties": map[string]any{"target": map[string]any{"type": "string", "enum": targets, "description": "the step whose condition holds"}}}}
}

// transitionTarget is the node the model chose in calls, if it called
// flow_transition with a target it was offered ("": it did not).
func transitionTarget(calls []llm.ToolCall, offered []choice) string {
	for _, c := range calls {
		if c.Name != toolTransition {
			continue
		}
		var a struct {
			Target string `json:"target"`
		}
		if opt.Unmarshal([]byte(c.Arguments), &a) == nil && slices.ContainsFunc(offered, func(o choice) bool { return o.target == a.Target }) {
			return a.Target
		}
	}
	return ""
}

// judgeBudget bounds a model call that decides an edge or extracts
// values: the caller waits for it.
const judgeBudget = 8 * time.Second

// judge asks the model which of cs holds in the conversation so far: one
// structured call, the first that holds ("": none, no model, or the model
// failed, which is logged).
func (s *agentSide) judge(ctx context.Context, history []llm.Message, cs []choice) string {
	if len(cs) == 0 || s.e.LLM == nil {
		return ""
	}
	targets := []any{"none"}
	var lines []string
	for i, c := range cs {
		id := fmt.Sprint(i + 1)
		targets = append(targets, id)
		lines = append(lines, id+": "+c.condition)
	}
	prompt := "You decide how a phone conversation goes on. Read the conversation and answer which of these conditions holds now, " +
		"the first one if several do, or none:\n" + strings.Join(lines, "\n")
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"holds"},
		"properties": map[string]any{"holds": map[string]any{"type": "string", "enum": targets}}}
	var out struct {
		Holds string `json:"holds"`
	}
	if !s.structured(ctx, "flow_edge", prompt, history, schema, &out) {
		return ""
	}
	for i, c := range cs {
		if out.Holds == fmt.Sprint(i+1) {
			return c.target
		}
	}
	return ""
}

// structured asks the model, under prompt, about the dialogue of history
// for a JSON answer following schema, decoded into out; false when there
// is none (the model failed or answered off the schema: logged).
func (s *agentSide) structured(ctx context.Context, name, prompt string, history []llm.Message, schema map[string]any, out any) bool {
	jctx, cancel := context.WithTimeout(ctx, judgeBudget)
	defer cancel()
	temp := 0.0
	res, err := s.e.LLM.Stream(jctx, llm.Request{Model: s.e.Model, Temperature: &temp, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: prompt},
		{Role: llm.RoleUser, Content: "The conversation so far:\n" + strings.Join(dialogue(history), "\n")},
	}, ResponseFormat: &llm.JSONSchema{Name: name, Schema: schema, Strict: true}}, nil)
	s.metrics.addLLM(res.Usage)
	if err == nil {
		err = opt.Unmarshal([]byte(unfence(res.Text)), out)
	}
	if err != nil {
		s.e.log().Warn("flow: no structured answer", "call_id", s.call.ID, "what", name, "err", err)
		return false
	}
	return true
}

// unfence takes a Markdown code fence off a JSON answer, which some
// compatible servers add.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") && strings.HasSuffix(t, "```") && len(t) >= 6 {
		t = strings.TrimSpace(t[3 : len(t)-3])
		t = strings.TrimSpace(strings.TrimPrefix(t, "json"))
	}
	return t
}

// extract fills node n's variables from the conversation: one structured
// call whose schema types each value (null: not said). Values found are
// kept; the transcript gets a flow_extract entry with them.
func (t *flowTurnRun) extract(ctx context.Context, n *flow.Node) {
	props := map[string]any{}
	var required []any
	var lines []string
	for _, v := range n.Variables {
		p := map[string]any{"type": []any{v.Type, "null"}, "description": v.Description}
		if len(v.Enum) > 0 {
			enum := []any{nil}
			for _, e := range v.Enum {
				enum = append(enum, e)
			}
			p["enum"] = enum
		}
		props[v.Name] = p
		required = append(required, v.Name)
		lines = append(lines, fmt.Sprintf("- %s (%s): %s", v.Name, v.Type, v.Description))
	}
	prompt := "Extract these values from the phone conversation below. Use null for a value the caller has not given; never guess.\n" +
		strings.Join(lines, "\n")
	if in := strings.TrimSpace(t.fs.render(n.Instruction)); in != "" {
		prompt += "\n" + in
	}
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": required, "properties": props}
	var got map[string]any
	found := map[string]any{}
	if t.s.structured(ctx, "flow_extract", prompt, t.io.history(), schema, &got) {
		for _, v := range n.Variables {
			if val, ok := typed(got[v.Name], v); ok {
				t.fs.setVar(v.Name, val)
				found[v.Name] = val
			}
		}
	}
	args, _ := json.Marshal(map[string]string{"node": n.ID})
	out, _ := json.Marshal(found)
	t.io.record(llm.ToolCall{ID: "flow-extract-" + n.ID, Name: entryExtract, Arguments: string(args)}, string(out))
}

// typed is an extracted value as variable v's type, false when it is
// missing or of another type (a model that does not enforce the schema).
func typed(val any, v flow.Variable) (any, bool) {
	switch x := val.(type) {
	case string:
		if v.Type != "string" || strings.TrimSpace(x) == "" || (len(v.Enum) > 0 && !slices.Contains(v.Enum, x)) {
			return nil, false
		}
		return x, true
	case float64:
		if v.Type == "integer" && x == float64(int64(x)) {
			return int64(x), true
		}
		return x, v.Type == "number"
	case bool:
		return x, v.Type == "boolean"
	}
	return nil, false
}

// callTool runs tool node n: its arguments filled in from the variables,
// the call made and recorded as the model's would be, the result kept in
// resultVariable and shown to the model.
func (t *flowTurnRun) callTool(ctx context.Context, n *flow.Node) {
	args, _ := json.Marshal(renderArgs(n.Arguments, t.fs.vars))
	tc := llm.ToolCall{ID: "flow-tool-" + n.ID, Name: n.Tool, Arguments: string(args)}
	var out string
	if n.Tool == toolPressDigit {
		if digits, bad := digitsArg(tc.Arguments); bad != "" {
			out = bad
		} else {
			out = t.io.pressDigits(ctx, digits)
		}
	} else {
		t.io.waiting(func() { out = t.runTool(ctx, n.Tool, tc) })
	}
	t.io.record(tc, out)
	t.io.note(llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{tc}},
		llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Content: out})
	if n.ResultVariable != "" {
		var v any = out
		var obj map[string]any
		if opt.Unmarshal([]byte(out), &obj) == nil { // a key given twice: the text as it came
			v = obj
		}
		t.fs.setVar(n.ResultVariable, v)
	}
}

// runTool runs a tool node's tool other than press_digit (which acts on
// the line and gets no filler).
func (t *flowTurnRun) runTool(ctx context.Context, name string, tc llm.ToolCall) string {
	switch name {
	case toolSendMessage:
		body, bad := messageArg(tc.Arguments)
		if bad != "" {
			return bad
		}
		return t.io.sendMessage(ctx, body)
	case toolSearchKnowledge:
		return t.s.searchKnowledge(ctx, t.turnID, tc.Arguments)
	}
	if ct, ok := t.s.customTool(name); ok {
		return t.s.callCustomTool(ctx, ct, tc.Arguments)
	}
	return "error: the agent has no enabled custom tool named " + name
}

// renderArgs fills {{variables}} into a tool node's arguments: in every
// string, and a string that is exactly one placeholder takes the
// variable's own value (a number stays a number).
func renderArgs(v any, vars map[string]any) any {
	switch x := v.(type) {
	case string:
		if name, ok := onlyPlaceholder(x); ok {
			if val, set := vars[name]; set {
				return val
			}
		}
		return call.Render(x, vars)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = renderArgs(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = renderArgs(e, vars)
		}
		return out
	case nil:
		return map[string]any{}
	}
	return v
}

// onlyPlaceholder is the variable name of a string that is one {{name}}.
func onlyPlaceholder(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{{") || !strings.HasSuffix(t, "}}") || strings.Count(t, "{{") != 1 {
		return "", false
	}
	return strings.TrimSpace(t[2 : len(t)-2]), true
}
