package openai

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/httpclient"
	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// Defaults of Config's zero values.
const (
	DefaultBaseURL           = "https://api.openai.com/v1"
	DefaultModel             = "gpt-4o-mini-tts"
	DefaultVoice             = "alloy"
	DefaultFirstAudioTimeout = 10 * time.Second
	DefaultStallTimeout      = 5 * time.Second
)

const (
	// maxErrorBody bounds how much of an error answer is read.
	maxErrorBody = 64 << 10
	// maxRate is the highest sample rate taken: far above any audio sink.
	maxRate = 384000
)

// Config configures a Synthesizer. Only APIKey is needed for OpenAI itself.
type Config struct {
	// BaseURL is the API root ("": DefaultBaseURL), like
	// http://127.0.0.1:8000/v1 for a local speaches server.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" ("": no header).
	APIKey string
	// Model names the speech model ("": DefaultModel).
	Model string
	// Voice is used when a Request names none ("": DefaultVoice).
	Voice string
	// Format is the response_format asked for: FormatWAV ("", the
	// default), whose header says the audio's rate, or FormatPCM, raw
	// samples at PCMRate.
	Format string
	// PCMRate is the sample rate of a raw answer that does not state its
	// own (<= 0: Rate, OpenAI's 24 kHz). Set, it is also asked for as
	// sample_rate with FormatPCM.
	PCMRate int
	// FirstAudioTimeout bounds the wait from sending the request to the
	// first bytes of audio (<= 0: DefaultFirstAudioTimeout).
	FirstAudioTimeout time.Duration
	// StallTimeout bounds every later wait for more audio
	// (<= 0: DefaultStallTimeout).
	StallTimeout time.Duration
	// HTTPClient sends the requests (nil: a client of the Synthesizer's
	// own, whose idle connections Close releases).
	HTTPClient *http.Client
	// Logger hears once that the server refuses sample_rate (nil:
	// slog.Default()).
	Logger *slog.Logger
}

// Synthesizer speaks text with an OpenAI-compatible speech API. It is safe
// for concurrent use.
type Synthesizer struct {
	endpoint     string
	key          string
	model        string
	voice        string
	format       string
	pcmRate      int // of a raw answer that does not say
	pcmRateAsked int // Config.PCMRate, asked for with FormatPCM (0: not asked)
	firstAudio   time.Duration
	stall        time.Duration
	http         httpclient.Client
	log          *slog.Logger

	// rateRefused is set once the server refused sample_rate: it is not
	// sent again.
	rateRefused atomic.Bool
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// New returns a Synthesizer for c. It sends nothing until Synthesize.
func New(c Config) *Synthesizer {
	s := &Synthesizer{
		endpoint:   strings.TrimRight(cmp.Or(c.BaseURL, DefaultBaseURL), "/") + "/audio/speech",
		key:        c.APIKey,
		model:      cmp.Or(c.Model, DefaultModel),
		voice:      cmp.Or(c.Voice, DefaultVoice),
		format:     cmp.Or(c.Format, FormatWAV),
		pcmRate:    Rate,
		firstAudio: c.FirstAudioTimeout,
		stall:      c.StallTimeout,
		http:       httpclient.Or(c.HTTPClient),
		log:        cmp.Or(c.Logger, slog.Default()),
	}
	if c.PCMRate > 0 {
		s.pcmRate, s.pcmRateAsked = c.PCMRate, c.PCMRate
	}
	if s.firstAudio <= 0 {
		s.firstAudio = DefaultFirstAudioTimeout
	}
	if s.stall <= 0 {
		s.stall = DefaultStallTimeout
	}
	return s
}

// Close releases idle connections of the Synthesizer's own HTTP client
// (none when Config.HTTPClient was given). The Synthesizer stays usable.
func (s *Synthesizer) Close() {
	s.http.CloseIdle()
}

// Synthesize implements tts.Synthesizer.
func (s *Synthesizer) Synthesize(ctx context.Context, r tts.Request, rate int, out func(pcm []int16) error) (tts.Stats, error) {
	if rate <= 0 || rate > maxRate {
		return tts.Stats{}, fmt.Errorf("openai tts: sample rate %d Hz is not usable", rate)
	}
	n := utf8.RuneCountInString(r.Text)
	if n > MaxText {
		return tts.Stats{}, fmt.Errorf("%w: %d characters, the API takes at most %d", tts.ErrTextTooLong, n, MaxText)
	}
	if err := ctx.Err(); err != nil {
		return tts.Stats{}, fmt.Errorf("openai tts: %w", err)
	}
	if strings.TrimSpace(r.Text) == "" {
		return tts.Stats{}, nil
	}
	stats := tts.Stats{Characters: n}

	// run carries the request; the watchdog cancels it with a
	// tts.ErrUnavailable cause when the first audio is late or the stream
	// stalls.
	run, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dog := &watchdog{cancel: cancel}
	defer dog.stop()
	dog.arm(s.firstAudio, fmt.Errorf("%w: no audio within %s", tts.ErrUnavailable, s.firstAudio))
	resp, err := s.send(ctx, run, r, rate)
	if err != nil {
		return stats, err
	}
	defer resp.Body.Close()
	src, err := openAnswer(resp, s.format, s.pcmRate)
	if err != nil {
		if errors.Is(err, tts.ErrUnavailable) {
			return stats, err
		}
		return stats, s.failed(ctx, run, err, true)
	}
	samples, err := s.stream(ctx, src, rate, dog, out)
	stats.Audio = duration(samples, rate)
	var oe outError
	switch {
	case errors.As(err, &oe):
		return stats, oe.err
	case err != nil:
		return stats, s.failed(ctx, run, err, true)
	case samples == 0:
		return stats, fmt.Errorf("%w: the answer has no audio", tts.ErrUnavailable)
	}
	return stats, nil
}

// send posts the request for r and returns the 200 answer, whose body the
// caller closes. A server that refuses the sample_rate field is asked once
// more without it, and never again with it.
func (s *Synthesizer) send(ctx, run context.Context, r tts.Request, rate int) (*http.Response, error) {
	for {
		asked := s.askRate(rate)
		traced, sent := apierr.Trace(run)
		req, err := http.NewRequestWithContext(traced, http.MethodPost, s.endpoint, bytes.NewReader(s.body(r, asked)))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", tts.ErrUnavailable, err)
		}
		req.Header.Set("Content-Type", "application/json")
		if s.key != "" {
			req.Header.Set("Authorization", "Bearer "+s.key)
		}
		resp, err := s.http.Do(req)
		if err != nil {
			return nil, s.failed(ctx, run, err, sent())
		}
		if resp.StatusCode == http.StatusOK {
			if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" || strings.HasPrefix(mt, "text/") {
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
				resp.Body.Close()
				return nil, fmt.Errorf("%w: the answer is %s, not audio%s", tts.ErrUnavailable, mt, apierr.Quote(apierr.Parse(msg).Message, s.key))
			}
			return resp, nil
		}
		msg, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		if err != nil && ctx.Err() != nil {
			return nil, s.failed(ctx, run, err, true)
		}
		e := apierr.Parse(msg)
		if asked != 0 && refusesRate(resp.StatusCode, e) {
			if !s.rateRefused.Swap(true) {
				shown, _ := apierr.Redact(e.Message, s.key)
				s.log.Info("the speech server refuses sample_rate: asking without it from now on, and resampling what it sends",
					"tts", "openai", "status", resp.StatusCode, "message", shown)
			}
			continue
		}
		return nil, statusError(resp.StatusCode, e, s.key)
	}
}

// failed explains a request that broke off: the caller's cancel, a
// timeout, or the network (sent: whether the request's headers, with the
// key, went out).
func (s *Synthesizer) failed(ctx, run context.Context, err error, sent bool) error {
	return apierr.BrokeOff(ctx, run, err, "openai tts", tts.ErrUnavailable, s.key, sent)
}

// duration is how long n samples last at rate.
func duration(n int64, rate int) time.Duration {
	r := int64(rate)
	return time.Duration(n/r)*time.Second + time.Duration(n%r)*time.Second/time.Duration(r)
}
