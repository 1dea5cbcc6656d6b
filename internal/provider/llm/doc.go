// Package llm owns the conversation engine's view of a large language
// model: the [Client] interface that streams one chat completion, the
// request and result types it speaks ([Request], [Message], [Tool],
// [ToolCall], [JSONSchema], [Result], [Usage]) and the error kinds every implementation
// wraps ([ErrUnavailable], [ErrTimeout], [ErrRejected]) so callers can
// decide between retrying, falling back and giving up.
//
// Implementations live below it, one folder per wire protocol: openai (any
// OpenAI-compatible chat-completions API). Each has a fake that speaks the
// same protocol on loopback (llmtest for openai), so tests go through the
// real client code.
package llm
