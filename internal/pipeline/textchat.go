package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// Chat is a text-only conversation between a simulated caller and an
// agent: a test run's fast mode, no audio. The agent's side is the agent
// a caller would get on a call (agentSide): its model, rendered prompt,
// temperature, reasoning effort, knowledge retrieval and tools.
type Chat struct {
	// Agent is the agent under test, as stored.
	Agent model.Agent
	// Call is the stand-in record the agent speaks on, as ChatCall builds
	// it: inbound, its variables, prompt and first message rendered, and
	// no ID (no call record exists; custom tools get callId null).
	Call model.Call
	// CallerPrompt is the simulated caller's system prompt.
	CallerPrompt string
	// MaxTurns is how many turns the caller takes at most (0:
	// DefaultChatTurns).
	MaxTurns int
}

// DefaultChatTurns is Chat.MaxTurns's default.
const DefaultChatTurns = 20

// Why a text chat ended (ChatResult.EndCause): call.CauseEndCallTool when
// either side called end_call, call.CauseTransferred when the agent
// transferred the caller, call.CauseSilenceTimeout when the simulated
// caller said nothing and did not hang up, and ChatMaxTurns.
const (
	// ChatMaxTurns: the caller had its MaxTurns turns and the agent
	// answered the last.
	ChatMaxTurns = "max_turns"
)

// Who ended a text chat (ChatResult.EndedBy).
const (
	EndedByAgent  = "agent"
	EndedByCaller = "caller"
)

// ChatResult is how a text chat went.
type ChatResult struct {
	// Transcript is the agent's side of the chat, entry for entry in the
	// shape of a call's transcript (transcript.go): user and assistant
	// messages with turnId, tool_call entries (knowledge searches
	// included), each with "at" (seconds since the chat began) and "seq".
	Transcript []map[string]any
	// EndCause is why the chat ended (see ChatMaxTurns).
	EndCause string
	// EndedBy is who ended it: EndedByAgent, EndedByCaller, or "" when
	// the turns ran out.
	EndedBy string
	// Metrics are the agent's, in a call's metrics shape: its model's
	// tokens and its knowledge retrievals (no audio figures).
	Metrics map[string]any
}

// ChatCall is the stand-in record for a text chat with agent a: what an
// inbound call from from to to would carry, with the agent's default
// variables, the system ones and vars merged (later layers win), and the
// prompt and first message rendered with them. It has no ID: nothing is
// stored.
func ChatCall(a model.Agent, from, to string, vars map[string]any, now time.Time) model.Call {
	v := call.Merge(a.Config.DefaultVariables, call.SystemVariables(a, model.Inbound, from, to, now), vars)
	c := model.Call{OrgID: a.OrgID, AgentID: a.ID, AgentName: a.Name, Direction: model.Inbound,
		FromNumber: from, ToNumber: to, Variables: v, Prompt: call.Render(a.Config.PromptTemplate, v),
		Transcript: []map[string]any{}, Metrics: map[string]any{}}
	if a.Config.FirstMessage != nil {
		m := call.Render(*a.Config.FirstMessage, v)
		c.FirstMessage = &m
	}
	return c
}

// Chat runs a text chat to its end: the agent opens per firstMessageMode
// (or the caller speaks first), then the caller and the agent take turns.
// Each caller turn is a model request of its own, under CallerPrompt, with
// the chat so far seen from the caller's side and one tool, end_call. The
// agent's tools run as on a call, except those that act on a phone line:
// press_digit and send_message are recorded as not sent, and a transfer
// ends the chat TRANSFERRED without one. A provider error, either side's,
// or ctx ending stops the chat: the error comes back with the result so
// far.
func (e *Engine) Chat(ctx context.Context, c Chat) (ChatResult, error) {
	tools, kbIDs, _ := e.agentResources(ctx, c.Call)
	ch := &chat{
		agentSide:    agentSide{e: e, agent: c.Agent.Config, call: c.Call, tools: tools, kbIDs: kbIDs, metrics: &metrics{}},
		callerPrompt: c.CallerPrompt,
		maxTurns:     c.MaxTurns,
		history:      []llm.Message{{Role: llm.RoleSystem, Content: systemPrompt(c.Call, c.Agent)}},
		log:          chatTranscript{stamp: call.Transcript{Answered: e.now(), Now: e.Now}, entries: []map[string]any{}},
	}
	if ch.maxTurns <= 0 {
		ch.maxTurns = DefaultChatTurns
	}
	var err error
	if ch.flow, err = newFlowState(c.Agent, c.Call); err != nil {
		return ChatResult{Transcript: ch.log.entries, Metrics: ch.metrics.doc()}, err
	}
	err = ch.run(ctx)
	res := ChatResult{Transcript: ch.log.entries, EndCause: ch.endCause, EndedBy: ch.endedBy, Metrics: ch.metrics.doc()}
	if ch.flow != nil {
		res.Metrics["flow"] = ch.flow.doc()
	}
	return res, err
}

// chat is one text chat's state. It runs on the goroutine that called
// Chat: one side speaks at a time and nothing plays, so nothing runs
// beside it.
type chat struct {
	agentSide
	callerPrompt string
	maxTurns     int
	history      []llm.Message // the agent's model's, from its system prompt
	heard        []llm.Message // the caller's model's: the agent's words as "user", its own as "assistant"
	log          chatTranscript
	flow         *flowState // a conversation_flow agent's flow (nil: a single prompt)
	turn         int        // the caller's turns so far
	endCause     string
	endedBy      string
}

func (ch *chat) run(ctx context.Context) error {
	if ch.e.LLM == nil {
		return errNoLLM
	}
	opened, err := ch.openFlow(ctx)
	if err != nil {
		return err
	}
	switch note, first := opening(ch.call, ch.agent); {
	case opened:
	case note != "":
		ch.history = append(ch.history, llm.Message{Role: llm.RoleUser, Content: note})
		if err := ch.agentTurn(ctx); err != nil {
			return err
		}
	case first != "":
		ch.log.append(assistantEntry(ch.turnID(), first))
		ch.history = append(ch.history, llm.Message{Role: llm.RoleAssistant, Content: first})
		ch.heard = append(ch.heard, llm.Message{Role: llm.RoleUser, Content: first})
	}
	for ch.endCause == "" {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ch.turn >= ch.maxTurns {
			ch.endCause = ChatMaxTurns
			return nil
		}
		if err := ch.callerTurn(ctx); err != nil || ch.endCause != "" {
			return err
		}
		if err := ch.agentTurn(ctx); err != nil {
			return err
		}
	}
	return nil
}

// agentTurn is the agent's answer to the chat so far: the model is asked
// round after round while it calls tools whose results it should see, as
// a call's reply does (reply.converse), with the same requests and tools.
func (ch *chat) agentTurn(ctx context.Context) error {
	t := &chatTurn{ch: ch, ctx: ctx, turnID: ch.turnID()}
	if ch.flow != nil {
		ch.flowTurn(ctx, ch.flow, t, t.turnID, callerSpoke(ch.history))
	} else {
		t.rounds(ctx, ch.request, nil)
	}
	if t.err != nil {
		return t.err
	}
	heard := "(silence)" // the caller's model needs a turn to answer
	if len(t.said) > 0 {
		heard = strings.Join(t.said, " ")
	}
	ch.heard = append(ch.heard, llm.Message{Role: llm.RoleUser, Content: heard})
	return nil
}

// chatTurn is one agent turn of a text chat: what the agent wrote, and
// the model's error that stopped it.
type chatTurn struct {
	textLine
	ch     *chat
	ctx    context.Context
	turnID string
	said   []string
	err    error
}

// rounds asks the model round after round while it calls tools whose
// results it should see, as a call's reply does (reply.rounds), each
// request built by req; it returns the flow node the model moved to
// ("": none). decided is called once the model has answered (nil: not
// asked).
func (t *chatTurn) rounds(ctx context.Context, req func([]llm.Message) llm.Request, decided func()) string {
	ch := t.ch
	for round := range maxToolRounds {
		msgs := ch.history
		if round == 0 && (ch.flow == nil || nodeKnowledge(ch.flow.node)) { // as a call: the chunks for the caller's words, on the turn's first request only
			msgs = ch.withKnowledge(ctx, t.turnID, msgs)
		}
		request := req(msgs)
		res, err := ch.e.LLM.Stream(ctx, request, ignoreText)
		ch.metrics.addLLM(res.Usage)
		if err != nil {
			t.err = fmt.Errorf("agent under test: %w", err)
			return ""
		}
		if decided != nil {
			decided()
		}
		if text := strings.TrimSpace(res.Text); text != "" {
			ch.log.append(assistantEntry(t.turnID, text))
			t.said = append(t.said, text)
		}
		if len(res.ToolCalls) == 0 {
			if res.Text != "" {
				ch.history = append(ch.history, llm.Message{Role: llm.RoleAssistant, Content: res.Text})
			}
			return ""
		}
		calls, moved, to := takeTransition(res.ToolCalls, offeredTargets(request))
		results, again, end := ch.runTools(ctx, t.turnID, calls, textLine{}, &ch.log)
		ch.history = append(ch.history, llm.Message{Role: llm.RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls})
		ch.history = append(ch.history, results...)
		if end != "" {
			ch.endCause, ch.endedBy = end, EndedByAgent
		}
		if moved != nil {
			ch.history = append(ch.history, transitionResult(*moved, to))
			if to != "" && end == "" {
				return to
			}
			again = again || to == ""
		}
		if !again || end != "" {
			return ""
		}
	}
	return ""
}

// A text chat's turn runs a flow as a call's reply does (flowIO), in
// writing: lines are written, not spoken, and a transfer ends the chat.

func (t *chatTurn) sayLine(text string) bool {
	t.ch.log.append(assistantEntry(t.turnID, text))
	t.ch.history = append(t.ch.history, llm.Message{Role: llm.RoleAssistant, Content: text})
	t.said = append(t.said, text)
	return true
}

func (t *chatTurn) answer(req func([]llm.Message) llm.Request, decided func()) (string, bool) {
	to := t.rounds(t.ctx, req, decided)
	return to, t.err == nil
}

func (t *chatTurn) transferTo(ctx context.Context, toNumber, mode string) (string, bool) {
	out, _, _ := t.transfer(ctx, toNumber)
	args, _ := json.Marshal(map[string]string{"to_number": toNumber})
	t.record(llm.ToolCall{ID: "flow-transfer", Name: toolTransfer, Arguments: string(args)}, out)
	t.ch.endCause, t.ch.endedBy = call.CauseTransferred, EndedByAgent
	return out, true
}

func (t *chatTurn) note(msgs ...llm.Message) { t.ch.history = append(t.ch.history, msgs...) }

func (t *chatTurn) history() []llm.Message { return t.ch.history }

func (t *chatTurn) record(c llm.ToolCall, output string) { t.ch.log.tool(t.turnID, c, output) }

func (t *chatTurn) end(cause string) { t.ch.endCause, t.ch.endedBy = cause, EndedByAgent }

func (t *chatTurn) at(*flow.Node) {}

// waiting runs work: nobody waits on a line in writing.
func (t *chatTurn) waiting(work func()) { work() }

// openFlow opens a flow's chat at its start node: recorded, and its
// static text written or, for a node that does not talk, run at once.
// false: the agent's usual opening applies.
func (ch *chat) openFlow(ctx context.Context) (bool, error) {
	fs := ch.flow
	if fs == nil {
		return false, nil
	}
	ch.log.tool(ch.turnID(), transitionCall("", fs.f.Start, reasonStart), "entered "+fs.f.Start)
	switch n := fs.node; {
	case n.Type != flow.Conversation:
		return true, ch.agentTurn(ctx)
	case n.StaticText != "":
		text := fs.render(n.StaticText)
		ch.log.append(assistantEntry(ch.turnID(), text))
		ch.history = append(ch.history, llm.Message{Role: llm.RoleAssistant, Content: text})
		ch.heard = append(ch.heard, llm.Message{Role: llm.RoleUser, Content: text})
		return true, nil
	}
	return false, nil
}

// callerHangUp is the simulated caller's one tool.
var callerHangUp = llm.Tool{Name: toolEndCall,
	Description: "Hang up: your script is done or the conversation is over. Say goodbye first.",
	Parameters:  map[string]any{"type": "object", "properties": map[string]any{}}}

// callerGoesFirst asks the caller's model to open when the agent does not.
const callerGoesFirst = "(The call has just been answered and the other side has said nothing yet. Speak first.)"

// callerTurn asks the simulated caller's model for its next words; what it
// says is the agent's next user turn. It may hang up with end_call.
func (ch *chat) callerTurn(ctx context.Context) error {
	msgs := append([]llm.Message{{Role: llm.RoleSystem, Content: ch.callerPrompt}}, ch.heard...)
	if len(ch.heard) == 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: callerGoesFirst})
	}
	res, err := ch.e.LLM.Stream(ctx, llm.Request{Model: ch.e.Model, Messages: msgs, Tools: []llm.Tool{callerHangUp}}, ignoreText)
	if err != nil {
		return fmt.Errorf("simulated caller: %w", err)
	}
	hangUp := false
	for _, tc := range res.ToolCalls {
		hangUp = hangUp || tc.Name == toolEndCall
	}
	text := strings.TrimSpace(res.Text)
	if text != "" {
		ch.turn++
		ch.log.append(userEntry(ch.turnID(), text, language(ch.agent)))
		ch.history = append(ch.history, llm.Message{Role: llm.RoleUser, Content: text})
		ch.heard = append(ch.heard, llm.Message{Role: llm.RoleAssistant, Content: text})
	}
	switch {
	case hangUp:
		ch.endCause, ch.endedBy = call.CauseEndCallTool, EndedByCaller
	case text == "": // a caller with nothing to say: on a call, the silence would end it
		ch.endCause, ch.endedBy = call.CauseSilenceTimeout, EndedByCaller
	}
	return nil
}

func (ch *chat) turnID() string { return fmt.Sprintf("turn-%d", ch.turn) }

func ignoreText(string) error { return nil }

// notSent is the result of a tool that would act on a phone line.
const notSent = "(text-only test: not sent)"

// textLine is a text chat's toolLine: there is no line, so keys and text
// messages are recorded but not sent, and a transfer ends the chat as it
// would end the call, without one.
type textLine struct{}

func (textLine) pressDigits(context.Context, string) string { return notSent }

func (textLine) transfer(_ context.Context, toNumber string) (string, bool, bool) {
	return "transferred to " + toNumber + " (text-only test: no real transfer)", true, false
}

func (textLine) sendMessage(context.Context, string) string { return notSent }

// chatTranscript keeps a text chat's entries as a call's transcript would
// have them: "at" and "endAt" stamped as call.Transcript stamps them (the
// same moment: a message takes no time to say), "seq" the entry's
// index as the store numbers it.
type chatTranscript struct {
	stamp   call.Transcript
	entries []map[string]any
}

func (t *chatTranscript) append(e map[string]any) {
	t.stamp.Stamp(e)
	e["seq"] = len(t.entries)
	t.entries = append(t.entries, e)
}

func (t *chatTranscript) tool(turnID string, c llm.ToolCall, output string) {
	t.append(toolEntry(turnID, c, output))
}

// toolRan is tool: in a text chat a line has no time of its own.
func (t *chatTranscript) toolRan(turnID string, c llm.ToolCall, output string, _ time.Time) {
	t.tool(turnID, c, output)
}
