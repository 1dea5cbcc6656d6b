package openai

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/parley-voice/parley/internal/httpclient"
	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// Defaults of Config's zero values.
const (
	DefaultFirstTokenTimeout = 5 * time.Second
	DefaultStallTimeout      = 5 * time.Second
	DefaultMaxRetries        = 1
)

// maxRetryDelay bounds the wait before a retry. A server asking for a longer
// wait (Retry-After) is not retried: the caller is on a live call.
const maxRetryDelay = 2 * time.Second

// Config configures a Client.
type Config struct {
	// BaseURL is the API root, like http://127.0.0.1:11434/v1 or
	// https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" ("": no header).
	APIKey string
	// Model is used when a Request names none.
	Model string
	// FirstTokenTimeout bounds the wait, per attempt, from sending the
	// request to the first token (<= 0: DefaultFirstTokenTimeout).
	FirstTokenTimeout time.Duration
	// StallTimeout is the longest gap allowed between chunks after the
	// first token (<= 0: DefaultStallTimeout).
	StallTimeout time.Duration
	// HTTPClient sends the requests (nil: a client of the Client's own,
	// whose idle connections Close releases).
	HTTPClient *http.Client
	// MaxRetries is how many times a failed attempt is retried before the
	// first token (0: DefaultMaxRetries; < 0: never).
	MaxRetries int
}

// Client streams chat completions from an OpenAI-compatible API. It
// implements llm.Client and is safe for concurrent use.
type Client struct {
	chat       sdk.ChatCompletionService
	key        string // kept out of error text
	model      string
	firstToken time.Duration
	stall      time.Duration
	http       httpclient.Client // the caller's, or our own
}

var _ llm.Client = (*Client)(nil)

// New returns a Client for c. It sends nothing until Stream is called.
func New(c Config) *Client {
	cl := &Client{
		key:        c.APIKey,
		model:      c.Model,
		firstToken: c.FirstTokenTimeout,
		stall:      c.StallTimeout,
	}
	if cl.firstToken <= 0 {
		cl.firstToken = DefaultFirstTokenTimeout
	}
	if cl.stall <= 0 {
		cl.stall = DefaultStallTimeout
	}
	retries := c.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	cl.http = httpclient.Or(c.HTTPClient)
	opts := []option.RequestOption{
		option.WithBaseURL(c.BaseURL),
		option.WithHTTPClient(cl.http.Client),
		option.WithMaxRetries(retries),
		option.WithMaxRetryDelay(maxRetryDelay),
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	// The service, unlike sdk.NewClient, reads no OPENAI_* environment
	// variables: a Parley agent's provider is configured, not inherited.
	cl.chat = sdk.NewChatCompletionService(opts...)
	return cl
}

// Close releases idle connections of the Client's own HTTP client (none
// when Config.HTTPClient was given). The Client stays usable.
func (c *Client) Close() {
	c.http.CloseIdle()
}

// Stream implements llm.Client.
func (c *Client) Stream(ctx context.Context, r llm.Request, onText func(delta string) error) (llm.Result, error) {
	params, err := c.params(r)
	if err != nil {
		return llm.Result{}, err
	}
	// run carries the request; the watchdog cancels it with an
	// llm.ErrTimeout cause when the first token is late or the stream stalls.
	run, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dog := &watchdog{cancel: cancel}
	defer dog.stop()
	attempts := &attemptLog{}
	late := fmt.Errorf("%w: no first token within %s", llm.ErrTimeout, c.firstToken)
	stalled := fmt.Errorf("%w: stream stalled for %s", llm.ErrTimeout, c.stall)

	traced, sent := apierr.Trace(run)
	stream := c.chat.NewStreaming(traced, params, option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		dog.arm(c.firstToken, late)
		resp, err := next(req)
		if err != nil || resp.StatusCode >= 300 {
			attempts.record(resp, err)
			dog.stop() // a retry, if any, arms it again; the backoff is not counted
		}
		return resp, err
	}))
	defer stream.Close()

	var acc accumulator
	for stream.Next() {
		chunk := stream.Current()
		delta, progress := acc.add(&chunk)
		if progress || acc.started {
			acc.started = true
			dog.arm(c.stall, stalled)
		}
		if delta != "" && onText != nil {
			if err := onText(delta); err != nil {
				return acc.result(), err
			}
		}
	}
	dog.stop()
	if err := stream.Err(); err != nil {
		if acc.finish != "" && ctx.Err() == nil {
			// The answer is complete; only the usage chunk or [DONE] is
			// missing. Not worth failing a turn already spoken for.
			return acc.result(), nil
		}
		return acc.result(), explain(ctx, run, err, attempts.last(), c.key, sent())
	}
	if acc.finish == "" && (ctx.Err() != nil || run.Err() != nil) {
		// Cut off, not finished (a finished stream may race a late timer).
		return acc.result(), explain(ctx, run, context.Canceled, attempts.last(), c.key, sent())
	}
	if !acc.chunks {
		return acc.result(), fmt.Errorf("%w: the stream ended without a chunk", llm.ErrUnavailable)
	}
	return acc.result(), nil
}

// watchdog cancels a request when its timer runs out.
type watchdog struct {
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
}

// arm (re)starts the timer: after d, the request is canceled with cause.
func (w *watchdog) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.timer = time.AfterFunc(d, func() { w.cancel(cause) })
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}
