package openai

import (
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/parley-voice/parley/internal/provider/llm"
)

// accumulator assembles a Result from a stream's chunks.
type accumulator struct {
	chunks  bool // any chunk arrived
	started bool // the first token arrived

	text   strings.Builder
	calls  []*llm.ToolCall
	byIdx  map[int64]*llm.ToolCall // the call each tool-call index is building
	args   map[*llm.ToolCall]*strings.Builder
	finish string
	usage  llm.Usage
}

// add takes in one chunk. It returns the text delta to hand on ("" if none)
// and whether the chunk carried a token: text, a tool call or a finish
// reason (a role-only or usage-only chunk does not).
func (a *accumulator) add(c *sdk.ChatCompletionChunk) (delta string, token bool) {
	a.chunks = true
	if u := c.Usage; u.PromptTokens != 0 || u.CompletionTokens != 0 {
		a.usage = llm.Usage{
			PromptTokens:       int(u.PromptTokens),
			CompletionTokens:   int(u.CompletionTokens),
			CachedPromptTokens: int(u.PromptTokensDetails.CachedTokens),
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		// A refusal is what the model says instead of an answer: the
		// caller speaks it like text.
		d := ch.Delta.Content + ch.Delta.Refusal
		if d != "" {
			a.text.WriteString(d)
			delta += d
			token = true
		}
		for j := range ch.Delta.ToolCalls {
			a.addToolCall(&ch.Delta.ToolCalls[j])
			token = true
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
			token = true
		}
	}
	return delta, token
}

// addToolCall merges one tool-call delta. The first delta of a call carries
// its index, id and name; later ones with the same index carry pieces of
// the arguments. A new id at a known index starts a new call, for servers
// that number every call 0.
func (a *accumulator) addToolCall(d *sdk.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIdx == nil {
		a.byIdx = map[int64]*llm.ToolCall{}
		a.args = map[*llm.ToolCall]*strings.Builder{}
	}
	call := a.byIdx[d.Index]
	if call == nil || (d.ID != "" && call.ID != "" && d.ID != call.ID) {
		call = &llm.ToolCall{}
		a.calls = append(a.calls, call)
		a.byIdx[d.Index] = call
		a.args[call] = &strings.Builder{}
	}
	if d.ID != "" {
		call.ID = d.ID
	}
	if d.Function.Name != "" {
		call.Name = d.Function.Name
	}
	a.args[call].WriteString(d.Function.Arguments)
}

// result is what has been assembled so far.
func (a *accumulator) result() llm.Result {
	r := llm.Result{Text: a.text.String(), FinishReason: a.finish, Usage: a.usage}
	for _, c := range a.calls {
		tc := *c
		tc.Arguments = a.args[c].String()
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r
}
