package llmtest

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// requestBody is the part of a chat-completions body the fake decodes.
type requestBody struct {
	Model               string           `json:"model"`
	Messages            []map[string]any `json:"messages"`
	Tools               []map[string]any `json:"tools"`
	Temperature         *float64         `json:"temperature"`
	ReasoningEffort     string           `json:"reasoning_effort"`
	Stream              bool             `json:"stream"`
	MaxCompletionTokens int              `json:"max_completion_tokens"`
	ResponseFormat      map[string]any   `json:"response_format"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func decodeRequest(body []byte) (Request, error) {
	var b requestBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Request{}, err
	}
	var all map[string]any
	if err := json.Unmarshal(body, &all); err != nil {
		return Request{}, err
	}
	if b.Model == "" {
		return Request{}, fmt.Errorf("'model' is a required property")
	}
	return Request{
		Model:               b.Model,
		Messages:            b.Messages,
		Tools:               b.Tools,
		Temperature:         b.Temperature,
		ReasoningEffort:     b.ReasoningEffort,
		Stream:              b.Stream,
		IncludeUsage:        b.StreamOptions != nil && b.StreamOptions.IncludeUsage,
		MaxCompletionTokens: b.MaxCompletionTokens,
		ResponseFormat:      b.ResponseFormat,
		Body:                all,
	}, nil
}

var lastID atomic.Int64

// completionID returns a new id in the API's form.
func completionID() string { return fmt.Sprintf("chatcmpl-fake%d", lastID.Add(1)) }

const fingerprint = "fp_llmtest"

// toolCallDelta is one entry of a chunk's delta.tool_calls.
type toolCallDelta struct {
	Index    int            `json:"index"`
	ID       string         `json:"id,omitempty"`
	Type     string         `json:"type,omitempty"`
	Function map[string]any `json:"function"`
}

// chunks returns the JSON of every chunk of a streamed reply, in order.
func chunks(req Request, reply Reply) []string {
	id, created := completionID(), time.Now().Unix()
	var out []string
	add := func(choices []any, usage any) {
		c := map[string]any{
			"id":                 id,
			"object":             "chat.completion.chunk",
			"created":            created,
			"model":              req.Model,
			"system_fingerprint": fingerprint,
			"choices":            choices,
		}
		if req.IncludeUsage {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		out = append(out, string(b))
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}

	if reply.Hang && len(reply.Text) == 0 && len(reply.ToolCalls) == 0 {
		return nil // headers, then nothing
	}
	first := map[string]any{"role": "assistant", "content": "", "refusal": nil}
	if len(reply.Text) == 0 && len(reply.ToolCalls) > 0 {
		first["content"] = nil
	}
	add(choice(first, nil), nil)
	for _, text := range reply.Text {
		add(choice(map[string]any{"content": text}, nil), nil)
	}
	for i, tc := range reply.ToolCalls {
		add(choice(map[string]any{"tool_calls": []toolCallDelta{{
			Index: i, ID: tc.ID, Type: "function",
			Function: map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil), nil)
		for _, piece := range split(tc.Arguments, 3) {
			add(choice(map[string]any{"tool_calls": []toolCallDelta{{
				Index: i, Function: map[string]any{"arguments": piece},
			}}}, nil), nil)
		}
	}
	if reply.Hang {
		return out // the scripted chunks, no finish
	}
	if reply.StreamError {
		msg := reply.Message
		if msg == "" {
			msg = "The server had an error while processing your request."
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": msg, "type": "server_error", "param": nil, "code": nil,
		}})
		return append(out, string(b))
	}
	add(choice(map[string]any{}, finishReason(reply)), nil)
	if req.IncludeUsage {
		add([]any{}, usageJSON(req, reply))
	}
	return out
}

// completion returns the chat.completion object of a non-streamed reply.
func completion(req Request, reply Reply) map[string]any {
	var text any
	if len(reply.Text) > 0 || len(reply.ToolCalls) == 0 {
		s := ""
		for _, t := range reply.Text {
			s += t
		}
		text = s
	}
	msg := map[string]any{"role": "assistant", "content": text, "refusal": nil}
	if len(reply.ToolCalls) > 0 {
		calls := make([]any, len(reply.ToolCalls))
		for i, tc := range reply.ToolCalls {
			calls[i] = map[string]any{
				"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments},
			}
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id":                 completionID(),
		"object":             "chat.completion",
		"created":            time.Now().Unix(),
		"model":              req.Model,
		"system_fingerprint": fingerprint,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "logprobs": nil, "finish_reason": finishReason(reply),
		}},
		"usage": usageJSON(req, reply),
	}
}

func finishReason(reply Reply) string {
	switch {
	case reply.FinishReason != "":
		return reply.FinishReason
	case len(reply.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// usageJSON is the usage object of a reply: reply.Usage, or an estimate of
// about four characters per token.
func usageJSON(req Request, reply Reply) map[string]any {
	u := reply.Usage
	if u == nil {
		prompt, completion := 0, 0
		for _, m := range req.Messages {
			if s, ok := m["content"].(string); ok {
				prompt += len(s)
			}
		}
		for _, t := range reply.Text {
			completion += len(t)
		}
		for _, tc := range reply.ToolCalls {
			completion += len(tc.Name) + len(tc.Arguments)
		}
		u = &Usage{PromptTokens: (prompt + 3) / 4, CompletionTokens: (completion + 3) / 4}
	}
	return map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details": map[string]any{
			"cached_tokens": u.CachedTokens,
			"audio_tokens":  0,
		},
		"completion_tokens_details": map[string]any{
			"reasoning_tokens":           0,
			"audio_tokens":               0,
			"accepted_prediction_tokens": 0,
			"rejected_prediction_tokens": 0,
		},
	}
}

// split cuts s into at most n pieces of about equal length, never inside a
// UTF-8 sequence. An empty s is one empty piece.
func split(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return []string{""}
	}
	size := (len(r) + n - 1) / n
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
