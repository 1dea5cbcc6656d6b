// Package embed names what Parley asks of an embeddings engine: turn texts
// (the chunks of a knowledge source when it is indexed, a caller's question
// when an agent searches) into vectors whose cosine similarity says how
// close the texts are in meaning. Parley keeps the vectors next to the
// chunks and ranks them in Go; the engine is only asked for vectors.
//
// Engines live in subpackages, one per wire protocol: openai (OpenAI's
// embeddings API and the servers that copy it: Ollama, LocalAI, vLLM,
// llama.cpp's server, ...), with a fake on loopback (openai/openaitest)
// whose vectors are a hashed bag of words, so tests get similarities that
// make sense without a model.
//
// Implementations wrap the errors below so callers can tell an engine that
// cannot serve now, and may later ([ErrUnavailable]), from texts it will
// never take as they are ([ErrRejected]).
package embed

import (
	"context"
	"errors"
)

// Embedder turns texts into vectors.
//
// Vectors of one Embedder are comparable with each other (same model, same
// dimension); vectors of differently configured Embedders are not.
// Canceling ctx stops the work promptly and returns an error wrapping
// ctx.Err() and neither kind below. An Embedder is safe for concurrent use.
type Embedder interface {
	// Embed returns one vector per text, in order, all of the same
	// dimension. No texts give nil and no error, without asking the engine.
	// On error no vectors are returned, not even those of texts already
	// done.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var (
	// ErrUnavailable means the engine cannot serve now: not reachable, too
	// slow, overloaded or rate limited, the key refused, or an answer that
	// is not what the protocol promises.
	ErrUnavailable = errors.New("embed: provider unavailable")
	// ErrRejected means the engine refused the request itself: an unknown
	// model, a text too long (or empty) for it, a dimension it does not
	// offer. Asking again the same way fails the same way.
	ErrRejected = errors.New("embed: request rejected")
)
