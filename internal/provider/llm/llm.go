package llm

import (
	"context"
	"errors"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of the conversation sent to the model.
type Message struct {
	Role       string     // "system", "user", "assistant", "tool"
	Content    string     // may be empty for an assistant message that only called tools
	ToolCalls  []ToolCall // assistant messages that called tools
	ToolCallID string     // tool messages: the call answered
}

// ToolCall is the model's request to run one tool.
type ToolCall struct {
	ID        string // the provider's call id, echoed in the tool message answering it
	Name      string
	Arguments string // JSON text, as the model wrote it (not validated)
}

// Tool is a function the model may call.
type Tool struct {
	Name, Description string
	Parameters        map[string]any // JSON Schema object; nil: no parameters
}

// Request is one chat completion to stream.
type Request struct {
	Model           string // "": the client's configured model
	Messages        []Message
	Tools           []Tool
	Temperature     *float64 // nil: the provider's default
	ReasoningEffort string   // "", "low", "medium", "high": sent only when set
	MaxTokens       int      // 0: unset
	// ResponseFormat asks for an answer that is a JSON document following a
	// schema (structured output) instead of free text; nil: free text. The
	// answer still arrives as Result.Text: the caller decodes and validates
	// it, since not every compatible server enforces the schema.
	ResponseFormat *JSONSchema
}

// JSONSchema names the JSON Schema a structured answer must follow.
type JSONSchema struct {
	Name        string         // a-z, A-Z, 0-9, _ and -, at most 64 characters; required
	Description string         // what the answer is for ("": not sent)
	Schema      map[string]any // a JSON Schema object
	// Strict asks the provider to enforce the schema exactly (OpenAI's
	// strict mode: every property required, additionalProperties false).
	Strict bool
}

// Usage is what the provider reported the completion cost, in tokens.
// Zero when the provider reported nothing.
type Usage struct {
	PromptTokens       int
	CompletionTokens   int
	CachedPromptTokens int // the part of PromptTokens served from the provider's prompt cache
}

// Result is a finished completion.
type Result struct {
	Text         string     // every text delta, concatenated
	ToolCalls    []ToolCall // complete, in the order the model made them
	FinishReason string     // stop, tool_calls, length, content_filter, ... ("" if the provider sent none)
	Usage        Usage
}

// Client streams a chat completion: onText gets each text delta as it
// arrives (return an error to stop; the stream is abandoned and that error
// returned). Tool calls are assembled and returned complete in Result.
// Canceling ctx abandons the request promptly.
//
// Errors other than onText's and ctx's wrap one of ErrUnavailable,
// ErrTimeout or ErrRejected. A Client is safe for concurrent use.
type Client interface {
	Stream(ctx context.Context, r Request, onText func(delta string) error) (Result, error)
}

// Error kinds: implementations wrap them so callers can tell them apart
// with errors.Is. The provider's own message stays in the error text.
var (
	// ErrUnavailable: connect failure, 5xx, 429 after retries, a stream
	// broken off by the provider. Worth trying again later or elsewhere.
	ErrUnavailable = errors.New("llm: provider unavailable")
	// ErrTimeout: no first token within the client's first-token timeout,
	// or the stream stalled.
	ErrTimeout = errors.New("llm: timeout")
	// ErrRejected: the provider refused the request itself (4xx other than
	// 429: bad key, unknown model, invalid body) or the request could not
	// be built. Not retried: sending it again gets the same answer.
	ErrRejected = errors.New("llm: request rejected")
)
