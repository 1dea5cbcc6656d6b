// Package openai owns Parley's client for OpenAI-compatible chat-completions
// APIs (OpenAI itself, and the many servers that copy its wire protocol:
// Ollama, vLLM, llama.cpp, OpenRouter, Groq, ...). [Client] implements
// llm.Client on top of github.com/openai/openai-go/v3: it streams
// POST {BaseURL}/chat/completions with "stream": true and
// stream_options.include_usage, hands text deltas to the caller as they
// arrive and assembles tool calls from their deltas. A Request's
// ResponseFormat goes out as response_format {"type": "json_schema",
// "json_schema": {...}} (structured output); the answer still comes back
// as text, for the caller to decode.
//
// # Timeouts and retries
//
// A voice call cannot wait, so the client watches the stream itself:
// each attempt must produce its first token (a chunk carrying text, a tool
// call or a finish reason; a role-only chunk does not count) within
// Config.FirstTokenTimeout, and after that no gap between chunks may exceed
// Config.StallTimeout. Either failure ends the request with llm.ErrTimeout.
// Connection failures, 408, 409, 429 and 5xx answers are retried by the SDK
// (Config.MaxRetries times, with its backoff of about half a second; a
// server's Retry-After is honoured up to 2 s, and a longer one fails at
// once); the wait between attempts does not count against the first-token
// timeout. Nothing is retried once the response headers of a successful
// answer have arrived: by then text may already have reached the caller.
// A stream that breaks off after its finish reason arrived (only the usage
// chunk or [DONE] missing) counts as finished.
//
// # Errors
//
// Failures wrap llm.ErrUnavailable (no connection, 5xx, 429, a stream
// broken off or an error event mid-stream), llm.ErrTimeout, or
// llm.ErrRejected (other 4xx: bad key, unknown model, invalid request),
// with the provider's own message in the text. The SDK's error type
// prints only the status, so the message is taken from the body here.
// A canceled ctx returns an error wrapping ctx.Err(); an error from onText
// is returned as is. In every case the Result holds what arrived before.
// onText may be nil.
//
// # Compatibility
//
// Text deltas include refusal deltas (what the model says instead of an
// answer). Tool-call deltas are merged by index; a new call id at a known
// index starts a new call, for servers that number every call 0. Only the
// first choice is read. A server that answers a stream request with a
// plain JSON body is reported as llm.ErrUnavailable ("the stream ended
// without a chunk"). Error bodies in other shapes than OpenAI's
// ({"error":"..."}, an HTML page from a proxy) still yield the status and
// a message.
package openai
