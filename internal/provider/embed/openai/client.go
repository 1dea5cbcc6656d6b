package openai

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/httpclient"
	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/embed"
)

// Defaults of Config's zero values, and limits.
const (
	DefaultModel     = "text-embedding-3-small"
	DefaultBatchSize = 96
	DefaultTimeout   = 30 * time.Second
	// MaxBatchSize is the most texts OpenAI takes in one request; a larger
	// Config.BatchSize is lowered to it.
	MaxBatchSize = 2048
)

// maxError bounds how much of an error answer is read.
const maxError = 1 << 20

// maxReplyPerText bounds how much of an answer is read, per text of the
// batch: a vector of 8,192 numbers written as OpenAI does, one per
// indented line, is about 260 KB.
const maxReplyPerText = 1 << 20

// Config configures an Embedder.
type Config struct {
	// BaseURL is the API root (required), like https://api.openai.com/v1
	// or http://127.0.0.1:11434/v1 for a local Ollama.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" ("": no header, for
	// local servers).
	APIKey string
	// Model names the embeddings model ("": DefaultModel).
	Model string
	// Dimensions asks for vectors of this length, for models that can
	// shorten theirs (0: the model's own length; < 0 is an error).
	Dimensions int
	// BatchSize is how many texts go in one request (<= 0:
	// DefaultBatchSize; at most MaxBatchSize).
	BatchSize int
	// Timeout bounds one request, from sending it to the last byte of the
	// answer (<= 0: DefaultTimeout).
	Timeout time.Duration
	// HTTPClient sends the requests (nil: a client of the Embedder's own,
	// whose idle connections Close releases).
	HTTPClient *http.Client
}

// Embedder embeds texts with an OpenAI-compatible embeddings API. It is
// safe for concurrent use.
type Embedder struct {
	endpoint   string
	key        string
	model      string
	dimensions int
	batch      int
	timeout    time.Duration
	http       httpclient.Client
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an Embedder for c, or an error when c cannot work (no
// BaseURL, one that is not an http or https URL, negative Dimensions, a
// key a header cannot carry). It sends nothing until Embed.
func New(c Config) (*Embedder, error) {
	u, err := url.Parse(c.BaseURL)
	switch {
	case c.BaseURL == "":
		return nil, errors.New("openai embed: no base URL")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		// Not the URL itself: it may carry a password.
		return nil, errors.New("openai embed: the base URL is not an http or https URL")
	case c.Dimensions < 0:
		return nil, fmt.Errorf("openai embed: dimensions %d", c.Dimensions)
	case strings.ContainsFunc(c.APIKey, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return nil, errors.New("openai embed: the API key has control characters")
	}
	e := &Embedder{
		endpoint:   strings.TrimRight(c.BaseURL, "/") + "/embeddings",
		key:        c.APIKey,
		model:      cmp.Or(c.Model, DefaultModel),
		dimensions: c.Dimensions,
		batch:      min(c.BatchSize, MaxBatchSize),
		timeout:    c.Timeout,
		http:       httpclient.Or(c.HTTPClient),
	}
	if e.batch <= 0 {
		e.batch = DefaultBatchSize
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	return e, nil
}

// Close releases idle connections of the Embedder's own HTTP client (none
// when Config.HTTPClient was given). The Embedder stays usable.
func (e *Embedder) Close() {
	e.http.CloseIdle()
}

// Embed implements embed.Embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs := make([][]float32, 0, len(texts))
	dim := e.dimensions
	for lo := 0; lo < len(texts); lo += e.batch {
		hi := min(lo+e.batch, len(texts))
		batch, err := e.post(ctx, texts[lo:hi], dim)
		if err != nil {
			if len(texts) > e.batch {
				err = fmt.Errorf("%w (texts %d-%d of %d)", err, lo, hi-1, len(texts))
			}
			return nil, err
		}
		dim = len(batch[0])
		vecs = append(vecs, batch...)
	}
	return vecs, nil
}

// request is the JSON body of one request.
type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

// post asks for the vectors of texts (one batch): dim long when dim > 0.
func (e *Embedder) post(ctx context.Context, texts []string, dim int) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openai embed: %w", err)
	}
	body, err := json.Marshal(request{Model: e.model, Input: texts, EncodingFormat: "float", Dimensions: e.dimensions})
	if err != nil {
		return nil, fmt.Errorf("openai embed: %w", err)
	}
	timedOut := fmt.Errorf("%w: no answer within %s", embed.ErrUnavailable, e.timeout)
	run, cancel := context.WithTimeoutCause(ctx, e.timeout, timedOut)
	defer cancel()
	traced, sent := apierr.Trace(run)
	req, err := http.NewRequestWithContext(traced, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", embed.ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return nil, e.failed(ctx, run, err, sent())
	}
	defer resp.Body.Close()
	limit := int64(maxError)
	if resp.StatusCode == http.StatusOK {
		limit = int64(len(texts)+1) * maxReplyPerText
	}
	reply, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, e.failed(ctx, run, err, true)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp.StatusCode, apierr.Parse(reply), e.key)
	}
	if int64(len(reply)) > limit {
		return nil, fmt.Errorf("%w: an answer over %d bytes for %d texts", embed.ErrUnavailable, limit, len(texts))
	}
	vecs, err := parseReply(reply, len(texts), dim, e.key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", embed.ErrUnavailable, err)
	}
	return vecs, nil
}

// failed explains a request that broke off: the caller's cancel, a
// timeout, or the network (sent: whether the request's headers, with the
// key, went out).
func (e *Embedder) failed(ctx, run context.Context, err error, sent bool) error {
	return apierr.BrokeOff(ctx, run, err, "openai embed", embed.ErrUnavailable, e.key, sent)
}
