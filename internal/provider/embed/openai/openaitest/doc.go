// Package openaitest owns a fake OpenAI embeddings server for tests: an
// httptest server on loopback that speaks the real wire protocol, so the
// embed/openai client is tested through its real HTTP and JSON code.
//
// POST /v1/embeddings takes what the API takes: a JSON object with model
// (required), input (one string or an array of at most [MaxInputs]
// non-empty strings; token arrays are refused here, there is no
// tokenizer), encoding_format ("float", the default, or "base64") and
// dimensions (an integer >= 1). It refuses what the API refuses, with
// OpenAI's error body {"error":{"message","type","param","code"}} and
// messages like OpenAI's: a missing or wrong key when [Options].APIKey is
// set (401, quoting the key's start and end as OpenAI does), a body that
// is not JSON, a missing model or input, an empty text or one over
// MaxTokens ("This model's maximum context length is ..."), a bad
// encoding_format or dimensions (all 400). A valid request is answered
//
//	{"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}],
//	 "model":model,"usage":{"prompt_tokens":n,"total_tokens":n}}
//
// with [Vector] of each text: a hashed bag of words, so texts sharing
// words are close and tests can compute the vectors they expect. The
// vectors are dimensions long when asked (Options.Dim otherwise, default
// [DefaultDim]). Options also make the server fail every request with a
// status, wait before answering, list the data out of order, or ignore
// dimensions; [Server.Requests] records what was sent.
package openaitest
