package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// Streaming says how a Streamer transcribes an utterance while it is
// spoken.
type Streaming string

const (
	// StreamingAuto streams over the Realtime API and falls back to
	// whole-utterance requests, for good, once the server refuses it.
	StreamingAuto Streaming = "auto"
	// StreamingRealtime streams over the Realtime API, or fails.
	StreamingRealtime Streaming = "realtime"
	// StreamingOff sends every utterance whole once it has ended.
	StreamingOff Streaming = "off"
)

// Defaults of the streaming settings' zero values.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultFinalTimeout   = 10 * time.Second
	DefaultSegmentSilence = 200 * time.Millisecond
)

// readLimit bounds one event from the server.
const readLimit = 1 << 20

// openAIHost is OpenAI's own API, which takes the model in the session
// update only (its URL takes no model for transcription sessions).
const openAIHost = "api.openai.com"

// Streamer is a Recognizer that also streams: Open transcribes an
// utterance as it is spoken over the Realtime API's transcription
// sessions, where the server offers them. It implements stt.Streamer and
// is safe for concurrent use: each stream has its own connection.
type Streamer struct {
	*Recognizer
	mode    Streaming
	wsURL   string
	urlErr  error
	dial    time.Duration
	final   time.Duration
	silence time.Duration
	wsHTTP  *http.Client
	log     *slog.Logger

	// refused is set once the server refused a realtime session
	// (StreamingAuto): every later utterance goes whole.
	refused atomic.Bool
}

var _ stt.Streamer = (*Streamer)(nil)

// NewStreamer returns a Streamer for c. It connects to nothing until Open.
func NewStreamer(c Config) *Streamer {
	s := &Streamer{
		Recognizer: New(c),
		mode:       cmp.Or(c.Streaming, StreamingAuto),
		dial:       positive(c.DialTimeout, DefaultDialTimeout),
		final:      positive(c.FinalTimeout, DefaultFinalTimeout),
		silence:    positive(c.SegmentSilence, DefaultSegmentSilence),
		wsHTTP:     c.HTTPClient,
		log:        cmp.Or(c.Logger, slog.Default()),
	}
	s.wsURL, s.urlErr = realtimeURL(cmp.Or(c.BaseURL, DefaultBaseURL), s.model)
	if s.wsHTTP == nil {
		// A handshake's connection becomes the stream or is refused:
		// nothing is kept idle, so nothing needs closing.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		s.wsHTTP = &http.Client{Transport: tr}
	}
	return s
}

// realtimeURL is the Realtime API's WebSocket URL under base: intent
// transcription, and (for servers other than OpenAI's, speaches among
// them) the model, which they take in the URL.
func realtimeURL(base, model string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return "", fmt.Errorf("%w: openai realtime: base URL: %w", stt.ErrUnavailable, err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("%w: openai realtime: base URL %q: scheme must be http(s) or ws(s)", stt.ErrUnavailable, base)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/realtime"
	u.RawPath, u.Fragment = "", ""
	q := url.Values{"intent": {"transcription"}}
	if u.Hostname() != openAIHost {
		q.Set("model", model)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Open implements stt.Streamer. With StreamingAuto and StreamingRealtime
// it opens a realtime transcription session and returns once the server
// has taken its settings; with StreamingOff, or StreamingAuto once the
// server refused a session, the stream gathers the utterance and
// transcribes it whole at Close. ctx governs the whole stream.
func (s *Streamer) Open(ctx context.Context, rate int, language string) (stt.Stream, error) {
	if rate <= 0 || rate > maxRate {
		return nil, fmt.Errorf("openai stt: sample rate %d Hz is not usable", rate)
	}
	code, err := languageCode(language)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.mode == StreamingOff || s.mode == StreamingAuto && s.refused.Load() {
		return s.whole(ctx, rate, language), nil
	}
	st, err := s.openRealtime(ctx, rate, language, code)
	switch {
	case err == nil:
		return st, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case s.mode == StreamingRealtime:
		return nil, err
	}
	if _, refused := errors.AsType[refusal](err); refused {
		if !s.refused.Swap(true) {
			s.log.Info("the speech-to-text server offers no realtime transcription: utterances go whole from now on", "stt", "openai", "err", err)
		}
	} else {
		s.log.Warn("realtime transcription did not open: this utterance goes whole", "stt", "openai", "err", err)
	}
	return s.whole(ctx, rate, language), nil
}

// refusal is a server that does not offer what Parley asked: a realtime
// session (an HTTP answer to the upgrade, an error event, another first
// event, a close).
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// openRealtime connects and configures a session within the dial timeout.
func (s *Streamer) openRealtime(ctx context.Context, rate int, language, code string) (*realtimeStream, error) {
	if s.urlErr != nil {
		return nil, s.urlErr
	}
	dctx, cancel := context.WithTimeout(ctx, s.dial)
	defer cancel() // the connection outlives the handshake's context
	header := http.Header{}
	if s.key != "" {
		header.Set("Authorization", "Bearer "+s.key)
	}
	traced, sent := apierr.Trace(dctx)
	conn, resp, err := websocket.Dial(traced, s.wsURL, &websocket.DialOptions{HTTPClient: s.wsHTTP, HTTPHeader: header})
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			return nil, refusal{fmt.Errorf("%w: the server refused a realtime session: %s", stt.ErrUnavailable,
				apierr.Describe(resp.StatusCode, apierr.Parse(body), s.key))}
		case errors.Is(dctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("%w: openai realtime: no connection within %s", stt.ErrUnavailable, s.dial)
		}
		// Without the URL (the operator's): say what failed.
		text, ok := apierr.Unanswered(err, s.key, sent())
		if !ok {
			text = "the handshake broke off"
		}
		return nil, fmt.Errorf("%w: openai realtime: %s", stt.ErrUnavailable, text)
	}
	conn.SetReadLimit(readLimit)
	d, err := s.setup(dctx, conn, code)
	if err != nil {
		_ = conn.CloseNow()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	log := s.log.With("stt", "openai", "dialect", d.String())
	log.Debug("openai realtime stream open", "model", s.model, "language", code, "rate", rate)
	return startRealtime(ctx, conn, realtimeConfig{rate: rate, language: language, key: s.key, final: s.final, log: log}), nil
}

// setup reads the session's first event, which tells its dialect, sends
// the settings in that dialect and waits for the server to confirm them.
func (s *Streamer) setup(ctx context.Context, conn *websocket.Conn, code string) (dialect, error) {
	next := func() (serverEvent, error) {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return serverEvent{}, fmt.Errorf("%w: openai realtime: the session did not start within %s", stt.ErrUnavailable, s.dial)
			}
			return serverEvent{}, refusal{fmt.Errorf("%w: openai realtime: the server ended the session as it started: %s", stt.ErrUnavailable, closeReason(err, s.key))}
		}
		e, err := parseEvent(data, s.key)
		if err != nil {
			return serverEvent{}, refusal{fmt.Errorf("%w: openai realtime: %w", stt.ErrUnavailable, err)}
		}
		if e.Type == "error" {
			return serverEvent{}, refusal{fmt.Errorf("%w: openai realtime: the server refused the session: %s", stt.ErrUnavailable, e.Error.describe(s.key))}
		}
		return e, nil
	}
	first, err := next()
	if err != nil {
		return 0, err
	}
	d, ok := dialectOf(first)
	if !ok {
		return 0, refusal{fmt.Errorf("%w: openai realtime: the session's first event is %q, not session.created", stt.ErrUnavailable, apierr.Shorten(first.Type))}
	}
	update := updateEvent(d, sessionSettings{model: s.model, language: code, silence: int(s.silence / time.Millisecond)})
	if err := conn.Write(ctx, websocket.MessageText, update); err != nil {
		return 0, fmt.Errorf("%w: openai realtime: sending the session's settings: %v", stt.ErrUnavailable, err)
	}
	for {
		e, err := next()
		if err != nil {
			return 0, err
		}
		if e.Type == updatedType(d) {
			return d, nil
		}
	}
}

// closeReason says how a connection ended: the close code and the reason
// the server gave (as apierr.Redact shows it with key; else the code's
// name), or the error, shown likewise.
func closeReason(err error, key string) string {
	if ce, ok := errors.AsType[websocket.CloseError](err); ok {
		if reason, _ := apierr.Redact(ce.Reason, key); reason != "" {
			return fmt.Sprintf("%d %s", int(ce.Code), reason)
		}
		return fmt.Sprintf("%d %s", int(ce.Code), ce.Code)
	}
	if text, ok := apierr.Redact(err.Error(), key); ok {
		return text
	}
	return "the connection broke"
}

func positive(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
