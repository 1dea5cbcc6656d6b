package openai

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/embed"
)

// parseReply reads the vectors out of an answer for n texts, in the order
// of their index: exactly n of them, each index in [0, n) once, all of the
// same non-zero length, which is dim when dim > 0. An item without an
// index stands at its place in the list. An error quotes the answer as
// apierr.Redact shows it with key.
func parseReply(body []byte, n, dim int, key string) ([][]float32, error) {
	var v struct {
		Data *[]struct {
			Index     *int            `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("the answer is not JSON%s", apierr.Quote(string(body), key))
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("the answer is not a list of embeddings: %s", apierr.Shorten(err.Error()))
	}
	if v.Data == nil {
		return nil, fmt.Errorf("the answer has no data%s", apierr.Quote(string(body), key))
	}
	data := *v.Data
	if len(data) != n {
		return nil, fmt.Errorf("%d embeddings for %d texts", len(data), n)
	}
	vecs := make([][]float32, n)
	for i, d := range data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n {
			return nil, fmt.Errorf("an embedding has index %d, for %d texts", at, n)
		}
		if vecs[at] != nil {
			return nil, fmt.Errorf("two embeddings have index %d", at)
		}
		var vec []float32
		if d.Embedding == nil {
			return nil, fmt.Errorf("embedding %d is empty", at)
		}
		if err := json.Unmarshal(d.Embedding, &vec); err != nil {
			var s string
			if json.Unmarshal(d.Embedding, &s) == nil {
				return nil, fmt.Errorf("embedding %d is a string (base64?), not numbers", at)
			}
			return nil, fmt.Errorf("embedding %d is not a list of numbers: %s", at, apierr.Shorten(err.Error()))
		}
		switch {
		case len(vec) == 0:
			return nil, fmt.Errorf("embedding %d is empty", at)
		case dim > 0 && len(vec) != dim:
			return nil, fmt.Errorf("embedding %d has %d dimensions, want %d", at, len(vec), dim)
		}
		dim = len(vec)
		vecs[at] = vec
	}
	return vecs, nil
}

// statusError is the error of an HTTP error answer. key is scrubbed from
// the server's message.
func statusError(status int, e apierr.Error, key string) error {
	kind := embed.ErrUnavailable
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestTimeout, http.StatusTooManyRequests:
	default:
		if status >= 400 && status < 500 {
			kind = embed.ErrRejected
		}
	}
	return fmt.Errorf("%w: %s", kind, apierr.Describe(status, e, key))
}
