package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// The transcript entries a flow adds (docs/flows.md): a node change, and
// an extract node's values.
const (
	entryTransition = "flow_transition"
	entryExtract    = "flow_extract"
)

// toolTransition is the function a conversation node offers the model to
// move the flow along a condition edge or to a global node.
const toolTransition = "flow_transition"

// Why the flow changed node (the transition entry's reason).
const (
	reasonStart          = "start"
	reasonCondition      = "condition"
	reasonExpression     = "expression"
	reasonAlways         = "always"
	reasonGlobal         = "global"
	reasonTransferFailed = "transfer_failed"
	reasonStalled        = "stalled"
)

// errNoFlow is a conversation_flow agent without a definition.
var errNoFlow = errors.New("the agent is in mode conversation_flow but has no flowDefinition: set one (docs/flows.md)")

// flowState is where a flow stands in one conversation and what it has
// gathered. The conversation's loop owns it; an agent turn works on a copy
// (clone) and the loop takes the copy back once the turn is over, as it
// takes the turn's messages, so the two never share it.
type flowState struct {
	f       *flow.Flow
	node    *flow.Node     // where the conversation is
	talk    *flow.Node     // the last conversation node: where a stalled turn goes back to
	vars    map[string]any // the call's variables and what the flow set
	set     map[string]any // what the flow set: extracted values and tool results
	visited []string       // node ids in the order entered, repeats kept
	turns   []map[string]any
}

// newFlowState is the flow of agent a on call c, at its start node (nil:
// the agent does not run a flow).
func newFlowState(a model.Agent, c model.Call) (*flowState, error) {
	if a.Mode != model.ModeConversationFlow {
		return nil, nil
	}
	if len(a.Config.FlowDefinition) == 0 {
		return nil, errNoFlow
	}
	f, err := flow.Parse(a.Config.FlowDefinition)
	if err != nil {
		return nil, fmt.Errorf("the agent's flowDefinition is not valid: %w", err)
	}
	fs := &flowState{f: f, vars: maps.Clone(c.Variables), set: map[string]any{}}
	if fs.vars == nil {
		fs.vars = map[string]any{}
	}
	fs.node = f.Node(f.Start)
	if fs.node.Type == flow.Conversation {
		fs.talk = fs.node
	}
	fs.visited = []string{f.Start}
	return fs, nil
}

// clone is a copy a turn may change without touching fs.
func (fs *flowState) clone() *flowState {
	if fs == nil {
		return nil
	}
	c := *fs
	c.vars, c.set = maps.Clone(fs.vars), maps.Clone(fs.set)
	c.visited, c.turns = slices.Clip(fs.visited), slices.Clip(fs.turns)
	return &c
}

// setVar keeps a value the flow found, for later nodes, tools and the
// call record. A JSON object is kept whole and each of its keys as
// name.key, so {{booking.reference}} renders.
func (fs *flowState) setVar(name string, v any) {
	fs.vars[name], fs.set[name] = v, v
	if obj, ok := v.(map[string]any); ok {
		for k, kv := range obj {
			fs.vars[name+"."+k], fs.set[name+"."+k] = kv, kv
		}
	}
}

func (fs *flowState) render(template string) string { return call.Render(template, fs.vars) }

// doc is the flow's part of the call's metrics.
func (fs *flowState) doc() map[string]any {
	return map[string]any{"startNodeId": fs.f.Start, "nodesVisited": slices.Clone(fs.visited),
		"turns": append([]map[string]any{}, fs.turns...), "variables": maps.Clone(fs.set)}
}

// flowIO is what a flow needs from the turn it runs in: a call's reply
// speaks and acts on the line, a text chat writes and pretends.
type flowIO interface {
	toolLine
	// sayLine says text word for word as the agent; false when the turn was
	// cut short (the caller interrupted, speech failed).
	sayLine(text string) bool
	// answer has the model answer under the request req builds, speaking
	// and running tools as any turn does, and reports the node it chose
	// through flow_transition ("": none); false when cut short or failed.
	// decided is called at its first words.
	answer(req func([]llm.Message) llm.Request, decided func()) (target string, ok bool)
	// transferTo hands the caller to toNumber (mode cold or warm); the
	// tool entry is written either way.
	transferTo(ctx context.Context, toNumber, mode string) (out string, transferred bool)
	// note adds messages to this turn's history.
	note(msgs ...llm.Message)
	// history is the conversation so far, as the model sees it.
	history() []llm.Message
	// record writes a tool entry of this turn.
	record(c llm.ToolCall, output string)
	// end ends the call once this turn is over.
	end(cause string)
	// at says which node is talking now (its interruption setting).
	at(n *flow.Node)
	// waiting runs work that keeps the caller waiting (a tool): a call's
	// reply plays a filler if it takes long.
	waiting(work func())
}

// flowTurn runs one agent turn of a flow. After caller speech (heard) the
// current node's way out is decided first; then nodes run until one
// talks (a conversation node answers, or says its static text), the call
// ends, or the caller is transferred.
func (s *agentSide) flowTurn(ctx context.Context, fs *flowState, io flowIO, turnID string, heard bool) {
	t := flowTurnRun{s: s, fs: fs, io: io, turnID: turnID, began: time.Now(), from: fs.node.ID, decided: -1}
	defer t.report()
	io.at(fs.node)
	if heard && fs.node.Type == flow.Conversation {
		if to, reason := t.afterCaller(ctx); to != "" {
			t.move(to, reason)
		}
	}
	t.run(ctx)
}

// flowTurnRun is one flow turn under way.
type flowTurnRun struct {
	s       *agentSide
	fs      *flowState
	io      flowIO
	turnID  string
	began   time.Time
	from    string
	hops    int
	entered bool          // the current node was entered in this turn
	decided time.Duration // from the turn's start to its first words or action (-1: not yet)
}

func (t *flowTurnRun) decide() {
	if t.decided < 0 {
		t.decided = time.Since(t.began)
	}
}

func (t *flowTurnRun) report() {
	if t.decided < 0 {
		t.decide()
	}
	t.s.metrics.prom.observeDecision(t.decided)
	t.fs.turns = append(t.fs.turns, map[string]any{"turnId": t.turnID, "from": t.from, "node": t.fs.node.ID,
		"transitions": t.hops, "decisionMs": float64(t.decided.Microseconds()) / 1000})
}

// move enters node to, recording the transition; false past MaxHops.
func (t *flowTurnRun) move(to, reason string) bool {
	if t.hops >= flow.MaxHops {
		return false
	}
	t.hops++
	from := t.fs.node.ID
	t.fs.node = t.fs.f.Node(to)
	if t.fs.node.Type == flow.Conversation {
		t.fs.talk = t.fs.node
	}
	t.fs.visited = append(t.fs.visited, to)
	t.entered = true
	t.io.at(t.fs.node)
	t.io.record(transitionCall(from, to, reason), "entered "+to)
	return true
}

func transitionCall(from, to, reason string) llm.ToolCall {
	args, _ := json.Marshal(map[string]string{"from": from, "to": to, "reason": reason})
	return llm.ToolCall{ID: "flow-" + to, Name: entryTransition, Arguments: string(args)}
}

// run runs nodes from the current one until one talks or the call is
// over.
func (t *flowTurnRun) run(ctx context.Context) {
	for ctx.Err() == nil {
		n := t.fs.node
		switch n.Type {
		case flow.Extract, flow.Tool:
			if n.Type == flow.Extract {
				t.extract(ctx, n)
			} else {
				t.callTool(ctx, n)
			}
			to, reason := t.leave(ctx, n)
			if !t.move(to, reason) {
				t.stall()
				return
			}
		case flow.Transfer:
			t.decide()
			if text := t.fs.render(n.Text); text != "" && !t.io.sayLine(text) {
				return
			}
			out, ok := t.io.transferTo(ctx, n.ToNumber, t.transferMode(n))
			if ok {
				return
			}
			t.io.note(llm.Message{Role: llm.RoleUser, Content: "(The transfer failed: " + out + " The caller is still on the line with you.)"})
			to, reason := t.leave(ctx, n)
			if to == "" && t.fs.talk != nil {
				to, reason = t.fs.talk.ID, reasonTransferFailed
			}
			if to == "" || !t.move(to, reason) {
				t.stall()
				return
			}
		case flow.End:
			t.decide()
			if text := t.fs.render(n.Text); text != "" && !t.io.sayLine(text) {
				return
			}
			t.io.end(call.CauseEndCallTool)
			return
		default: // conversation
			if t.entered && n.StaticText != "" {
				t.decide()
				t.io.sayLine(t.fs.render(n.StaticText))
				return
			}
			to, ok := t.io.answer(func(msgs []llm.Message) llm.Request { return t.s.nodeRequest(t.fs, msgs) }, t.decide)
			if !ok || to == "" {
				return
			}
			if !t.move(to, t.reason(n, to)) {
				t.stall()
				return
			}
		}
	}
}

// stall handles a turn that cannot go on (a loop of silent nodes past
// MaxHops, a failed transfer with nowhere to go): back to the last
// conversation node, which answers; with none, the call ends.
func (t *flowTurnRun) stall() {
	t.s.e.log().Warn("flow stalled", "call_id", t.s.call.ID, "node", t.fs.node.ID, "hops", t.hops)
	if t.fs.talk == nil || t.fs.talk == t.fs.node {
		t.io.end(call.CauseEndCallTool)
		return
	}
	from := t.fs.node.ID
	t.fs.node = t.fs.talk
	t.fs.visited = append(t.fs.visited, t.fs.node.ID)
	t.io.at(t.fs.node)
	t.io.record(transitionCall(from, t.fs.node.ID, reasonStalled), "entered "+t.fs.node.ID)
	t.io.answer(func(msgs []llm.Message) llm.Request { return t.s.nodeRequest(t.fs, msgs) }, t.decide)
}

// reason is why the model's choice of to moves the flow out of n: one of
// n's condition edges, or a global node.
func (t *flowTurnRun) reason(n *flow.Node, to string) string {
	if slices.ContainsFunc(n.Edges, func(e flow.Edge) bool { return e.Target == to && e.Condition != "" }) {
		return reasonCondition
	}
	return reasonGlobal
}

func (t *flowTurnRun) transferMode(n *flow.Node) string {
	if n.TransferMode != "" {
		return n.TransferMode
	}
	if m := deref(t.s.agent.TransferMode); m != "" {
		return m
	}
	return "cold"
}

// afterCaller is where a conversation node goes once the caller spoke,
// before the model answers: its first expression edge that holds; else,
// when it has an always-edge, the first of its condition edges and the
// global nodes that one model call judges to hold, else the always-edge.
// Without an always-edge the conditions are the answering model's to
// choose ("", "": none of these).
func (t *flowTurnRun) afterCaller(ctx context.Context) (to, reason string) {
	n := t.fs.node
	for _, e := range n.Edges {
		if e.Holds(t.fs.vars) {
			return e.Target, reasonExpression
		}
	}
	if len(n.Edges) == 0 || !n.Edges[len(n.Edges)-1].Always() {
		return "", ""
	}
	if to := t.s.judge(ctx, t.io.history(), t.choices(n)); to != "" {
		return to, t.reason(n, to)
	}
	return n.Edges[len(n.Edges)-1].Target, reasonAlways
}

// leave is where a node that does not talk goes: its first expression
// edge that holds, else the first condition edge the model judges to
// hold, else its always-edge ("": none).
func (t *flowTurnRun) leave(ctx context.Context, n *flow.Node) (to, reason string) {
	var conds []choice
	for _, e := range n.Edges {
		switch {
		case e.Holds(t.fs.vars):
			return e.Target, reasonExpression
		case e.Condition != "":
			conds = append(conds, choice{e.Target, e.Condition})
		}
	}
	if to := t.s.judge(ctx, t.io.history(), conds); to != "" {
		return to, reasonCondition
	}
	if len(n.Edges) > 0 && n.Edges[len(n.Edges)-1].Always() {
		return n.Edges[len(n.Edges)-1].Target, reasonAlways
	}
	return "", ""
}

// choice is a node the flow may move to, and when.
type choice struct{ target, condition string }

// choices are what the model may choose from in conversation node n: its
// condition edges, then the global nodes.
func (t *flowTurnRun) choices(n *flow.Node) []choice {
	var out []choice
	for _, e := range n.Edges {
		if e.Condition != "" {
			out = append(out, choice{e.Target, e.Condition})
		}
	}
	return append(out, t.globals(n)...)
}

func (t *flowTurnRun) globals(n *flow.Node) []choice {
	var out []choice
	for _, g := range t.fs.f.Globals() {
		if g != n {
			out = append(out, choice{g.ID, g.GlobalCondition()})
		}
	}
	return out
}
