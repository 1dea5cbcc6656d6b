// Package openai owns Parley's embeddings client for OpenAI's embeddings
// API and the servers that copy it (Ollama, LocalAI, vLLM, llama.cpp's
// server, ...). [Embedder] implements embed.Embedder with plain HTTP
// requests: the JSON is small enough to write by hand, and no SDK means no
// OPENAI_* environment variable can change where the texts go or which key
// is sent.
//
// # The requests
//
// Embed(ctx, texts) sends the texts in batches of Config.BatchSize
// (default 96, at most [MaxBatchSize]), one request after the other, each
//
//	POST {BaseURL}/embeddings
//	Authorization: Bearer {APIKey}          (omitted when APIKey is "")
//	Content-Type: application/json
//
//	{"model": Config.Model (default text-embedding-3-small),
//	 "input": [the batch's texts],
//	 "encoding_format": "float",
//	 "dimensions": Config.Dimensions}       (omitted when it is 0)
//
// and reads the answer {"data":[{"index":i,"embedding":[...]},...]}: the
// vectors are put in the order of their index (the API may list them in
// another), then the batches in the order of the texts. No texts give nil
// without a request. Texts go as they are: an empty text or one over the
// model's limit is for the server to refuse.
//
// # Checks and errors
//
// An answer must hold exactly one vector for each text of its batch, each
// index once; every vector of one Embed has the same, non-zero length, and
// that length is Config.Dimensions when it is set (a server that ignores
// "dimensions" is caught here). An answer that breaks this, is not the
// JSON above (a base64 embedding included), or is over a size no honest
// answer reaches wraps embed.ErrUnavailable.
//
// So do no connection, a 401 or 403 ("key refused"; the key, and anything
// in the server's message that looks like one, never appear in the error),
// 408, 429, 5xx and Config.Timeout (default 30 s) running out for one
// request. Any other 4xx (an unknown model, a text too long or empty, a
// dimension the model does not offer) wraps embed.ErrRejected. The
// server's message is kept in the error text, and when the texts took more
// than one batch, which texts failed ("(texts 96-191 of 250)"). Nothing is
// retried, and nothing of a failed Embed is returned. Canceling ctx
// returns an error wrapping ctx.Err() and no kind.
package openai
