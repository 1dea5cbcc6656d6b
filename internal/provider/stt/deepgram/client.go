package deepgram

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// Defaults of Config's zero values.
const (
	DefaultBaseURL      = "wss://api.deepgram.com"
	DefaultModel        = "nova-3"
	DefaultLanguage     = "en"
	DefaultDialTimeout  = 5 * time.Second
	DefaultFinalTimeout = 5 * time.Second
	// DefaultKeepAlive is within the 3-5 s Deepgram recommends: it closes
	// a stream that received nothing for 10 s (NET-0001).
	DefaultKeepAlive = 3 * time.Second
)

const (
	// maxChunk is the most samples sent in one binary message, so a long
	// Write (Transcribe's whole utterance) goes out in frames the server
	// reads comfortably (0.5 s at 16 kHz).
	maxChunk = 8000
	// readLimit bounds one message from the server (the library's default,
	// 32 KiB, is tight for a long final with its word timings).
	readLimit = 1 << 20
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API root ("": DefaultBaseURL). http:// and https://
	// are taken as ws:// and wss://; a trailing /v1 is allowed.
	BaseURL string
	// APIKey is sent as "Authorization: Token <key>".
	APIKey string
	// Model is Deepgram's model name ("": DefaultModel).
	Model string
	// DialTimeout bounds the connection and WebSocket handshake
	// (<= 0: DefaultDialTimeout).
	DialTimeout time.Duration
	// FinalTimeout bounds how long Close waits, after asking for the end
	// of the stream, for the final results and the server's close
	// (<= 0: DefaultFinalTimeout).
	FinalTimeout time.Duration
	// KeepAlive is how long a stream may go without audio before a
	// KeepAlive message is sent, and then between them
	// (<= 0: DefaultKeepAlive).
	KeepAlive time.Duration
	// HTTPClient performs the handshake (nil: a client of the Client's own
	// that keeps no idle connections).
	HTTPClient *http.Client
	// Logger receives debug records of each stream (nil: slog.Default()).
	Logger *slog.Logger
}

// Client is Deepgram's live-streaming speech-to-text. It implements
// stt.Streamer and is safe for concurrent use: each stream has its own
// connection.
type Client struct {
	endpoint  *url.URL // .../v1/listen, without a query
	urlErr    error    // a BaseURL that cannot be used, reported by Open
	key       string
	model     string
	dial      time.Duration
	final     time.Duration
	keepAlive time.Duration
	http      *http.Client
	log       *slog.Logger
}

var _ stt.Streamer = (*Client)(nil)

// New returns a Client for c. It connects to nothing until Open.
func New(c Config) *Client {
	cl := &Client{
		key:       c.APIKey,
		model:     cmp.Or(c.Model, DefaultModel),
		dial:      positive(c.DialTimeout, DefaultDialTimeout),
		final:     positive(c.FinalTimeout, DefaultFinalTimeout),
		keepAlive: positive(c.KeepAlive, DefaultKeepAlive),
		http:      c.HTTPClient,
		log:       c.Logger,
	}
	cl.endpoint, cl.urlErr = endpoint(cmp.Or(c.BaseURL, DefaultBaseURL))
	if cl.http == nil {
		// A handshake connection is never reused (it becomes the stream or
		// is refused), so nothing is kept idle and nothing needs closing.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		cl.http = &http.Client{Transport: tr}
	}
	if cl.log == nil {
		cl.log = slog.Default()
	}
	return cl
}

// endpoint is the listen URL under base.
func endpoint(base string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return nil, fmt.Errorf("%w: deepgram: base URL: %w", stt.ErrUnavailable, err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("%w: deepgram: base URL %q: scheme must be wss, ws, https or http", stt.ErrUnavailable, base)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: deepgram: base URL %q has no host", stt.ErrUnavailable, base)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/v1/listen")
	p = strings.TrimSuffix(p, "/v1")
	u.Path = p + "/v1/listen"
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u, nil
}

// listenURL is the endpoint with the stream's parameters (see the package
// documentation for the mapping).
func (c *Client) listenURL(rate int, language string) string {
	q := url.Values{}
	q.Set("model", c.model)
	q.Set("language", language)
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(rate))
	q.Set("channels", "1")
	q.Set("interim_results", "true") // the text so far, for stt.Partial
	q.Set("punctuate", "true")
	q.Set("smart_format", "true")
	u := *c.endpoint
	u.RawQuery = q.Encode()
	return u.String()
}

// Open implements stt.Streamer: it connects to Deepgram and returns the
// stream once the server has accepted it. ctx governs the whole stream.
func (c *Client) Open(ctx context.Context, rate int, language string) (stt.Stream, error) {
	if rate <= 0 {
		return nil, fmt.Errorf("stt/deepgram: sample rate %d", rate)
	}
	if c.urlErr != nil {
		return nil, c.urlErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	language = cmp.Or(strings.TrimSpace(language), DefaultLanguage)

	dctx, cancel := context.WithTimeout(ctx, c.dial)
	defer cancel() // the connection outlives the handshake's context
	header := http.Header{}
	header.Set("Authorization", "Token "+c.key)
	traced, sent := apierr.Trace(dctx)
	conn, resp, err := websocket.Dial(traced, c.listenURL(rate, language), &websocket.DialOptions{
		HTTPClient: c.http,
		HTTPHeader: header,
	})
	requestID := ""
	if resp != nil {
		requestID = resp.Header.Get("dg-request-id")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: deepgram: no connection within %s", stt.ErrUnavailable, c.dial)
		}
		return nil, handshakeError(resp, err, language, c.model, c.key, sent())
	}
	conn.SetReadLimit(readLimit)
	log := c.log.With("stt", "deepgram", "request_id", requestID)
	log.Debug("deepgram stream open", "model", c.model, "language", language, "rate", rate)
	return startStream(ctx, conn, streamConfig{
		rate:      rate,
		language:  language,
		requestID: requestID,
		key:       c.key,
		final:     c.final,
		keepAlive: c.keepAlive,
		log:       log,
	}), nil
}

// Transcribe implements stt.Recognizer over the streaming protocol: Open,
// one Write, Close. Empty pcm gives an empty Result without connecting.
func (c *Client) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	if rate <= 0 {
		return stt.Result{}, fmt.Errorf("stt/deepgram: sample rate %d", rate)
	}
	if len(pcm) == 0 {
		return stt.Result{Language: cmp.Or(strings.TrimSpace(language), DefaultLanguage)}, nil
	}
	s, err := c.Open(ctx, rate, language)
	if err != nil {
		return stt.Result{}, err
	}
	werr := s.Write(pcm)
	res, err := s.Close()
	if err == nil && werr != nil {
		err = werr // not expected: Close reports what broke the stream
	}
	return res, err
}

func positive(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
