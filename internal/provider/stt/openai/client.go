package openai

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/httpclient"
	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// Defaults of Config's zero values.
const (
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultModel   = "gpt-4o-mini-transcribe"
	DefaultTimeout = 15 * time.Second
)

// maxReply bounds how much of an answer is read: a transcript of a few
// minutes of speech is a few kilobytes.
const maxReply = 1 << 20

// maxRate is the highest sample rate taken: far above any audio source.
const maxRate = 384000

// Config configures a Recognizer. Only APIKey is needed for OpenAI itself.
type Config struct {
	// BaseURL is the API root ("": DefaultBaseURL), like
	// http://127.0.0.1:8000/v1 for a local speaches server.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" ("": no header).
	APIKey string
	// Model names the transcription model ("": DefaultModel).
	Model string
	// Timeout bounds one Transcribe from sending the request to the last
	// byte of the answer (<= 0: DefaultTimeout).
	Timeout time.Duration
	// HTTPClient sends the requests (nil: a client of the Recognizer's own,
	// whose idle connections Close releases; a Streamer's handshakes use
	// one that keeps no connection idle).
	HTTPClient *http.Client

	// The rest is a Streamer's.

	// Streaming says how Open transcribes ("": StreamingAuto).
	Streaming Streaming
	// DialTimeout bounds opening a realtime session: the connection, the
	// handshake and the session's settings (<= 0: DefaultDialTimeout).
	DialTimeout time.Duration
	// FinalTimeout bounds how long Close waits for the final transcript
	// after the end of the utterance (<= 0: DefaultFinalTimeout).
	FinalTimeout time.Duration
	// SegmentSilence is the pause after which the server's VAD commits a
	// segment of the caller's speech and transcribes it while the caller
	// goes on (<= 0: DefaultSegmentSilence).
	SegmentSilence time.Duration
	// Logger hears of fallbacks and streams (nil: slog.Default()).
	Logger *slog.Logger
}

// Recognizer transcribes utterances with an OpenAI-compatible
// transcription API. It is safe for concurrent use.
type Recognizer struct {
	endpoint string
	key      string
	model    string
	timeout  time.Duration
	http     httpclient.Client
}

var _ stt.Recognizer = (*Recognizer)(nil)

// New returns a Recognizer for c. It sends nothing until Transcribe.
func New(c Config) *Recognizer {
	r := &Recognizer{
		endpoint: strings.TrimRight(cmp.Or(c.BaseURL, DefaultBaseURL), "/") + "/audio/transcriptions",
		key:      c.APIKey,
		model:    cmp.Or(c.Model, DefaultModel),
		timeout:  c.Timeout,
		http:     httpclient.Or(c.HTTPClient),
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	return r
}

// Close releases idle connections of the Recognizer's own HTTP client (none
// when Config.HTTPClient was given). The Recognizer stays usable.
func (r *Recognizer) Close() {
	r.http.CloseIdle()
}

// Transcribe implements stt.Recognizer.
func (r *Recognizer) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	res := stt.Result{Language: language, Audio: stt.Duration(len(pcm), rate)}
	if rate <= 0 || rate > maxRate {
		return res, fmt.Errorf("openai stt: sample rate %d Hz is not usable", rate)
	}
	if len(pcm) > maxSamples {
		return res, fmt.Errorf("%w: %s of audio is a WAV over the API's %d bytes", stt.ErrAudioTooLong, res.Audio, MaxWAV)
	}
	code, err := languageCode(language)
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("openai stt: %w", err)
	}
	if len(pcm) == 0 {
		return res, nil
	}
	body, contentType := form(pcm, rate, r.model, code)

	timedOut := fmt.Errorf("%w: no transcript within %s", stt.ErrUnavailable, r.timeout)
	run, cancel := context.WithTimeoutCause(ctx, r.timeout, timedOut)
	defer cancel()
	traced, sent := apierr.Trace(run)
	req, err := http.NewRequestWithContext(traced, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return res, fmt.Errorf("%w: %w", stt.ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return res, r.failed(ctx, run, err, sent())
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		return res, r.failed(ctx, run, err, true)
	}
	if resp.StatusCode != http.StatusOK {
		return res, statusError(resp.StatusCode, apierr.Parse(reply), r.key)
	}
	text, err := parseTranscript(reply, r.key)
	if err != nil {
		return res, fmt.Errorf("%w: %w", stt.ErrUnavailable, err)
	}
	res.Text = text
	return res, nil
}

// failed explains a request that broke off: the caller's cancel, a
// timeout, or the network (sent: whether the request's headers, with the
// key, went out).
func (r *Recognizer) failed(ctx, run context.Context, err error, sent bool) error {
	return apierr.BrokeOff(ctx, run, err, "openai stt", stt.ErrUnavailable, r.key, sent)
}
