// Package llmtest owns a fake OpenAI-compatible chat-completions server for
// tests: an httptest server on loopback that speaks the real wire protocol,
// so the openai client is tested through its real HTTP, SSE and JSON code.
//
// POST /v1/chat/completions is answered from a script: a function from the
// decoded [Request] to a [Reply]. With "stream": true the reply goes out as
// Server-Sent Events, one chat.completion.chunk per "data:" line, ending
// with "data: [DONE]", the way the OpenAI API streams:
//
//   - a first chunk with the assistant role and empty content;
//   - one chunk per text delta;
//   - per tool call, a chunk with its index, id, type and function name and
//     empty arguments, then the arguments split in about three chunks;
//   - a chunk with an empty delta and the finish reason (stop, or
//     tool_calls when the reply calls tools);
//   - when the request asked for stream_options.include_usage, every chunk
//     carries "usage": null and a final chunk with no choices carries the
//     usage, prompt_tokens_details.cached_tokens included.
//
// Without "stream" the reply is one chat.completion object. A non-200
// Status answers with the API's error body {"error":{"message","type",...}}.
// Delay, ChunkGap and Hang shape the timing, for timeout tests.
package llmtest
