package elevenlabs

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/provider/tts"
)

// Defaults of Config's zero values.
const (
	DefaultBaseURL           = "wss://api.elevenlabs.io"
	DefaultModel             = "eleven_flash_v2_5"
	DefaultVoice             = "21m00Tcm4TlvDq8ikWAM" // Rachel, a premade voice every account has
	DefaultDialTimeout       = 5 * time.Second
	DefaultFirstAudioTimeout = 5 * time.Second
	DefaultStallTimeout      = 5 * time.Second
)

// MaxText is the most characters (runes) of cleaned text one Request may
// carry; longer text is tts.ErrTextTooLong. See the package doc for why
// 5000.
const MaxText = 5000

// maxRate bounds the rates asked for, as espeak does.
const maxRate = 384000

// Config configures a Synthesizer. Only APIKey is needed for the real API.
type Config struct {
	// BaseURL is the API root: wss://api.elevenlabs.io (the default), a
	// regional one like wss://api.eu.residency.elevenlabs.io, or a fake's.
	// http and https are taken as ws and wss.
	BaseURL string
	// APIKey is sent as the xi-api-key header ("": none).
	APIKey string
	// Model is the model_id (default DefaultModel).
	Model string
	// Voice is the voice_id used when a Request names none (default
	// DefaultVoice).
	Voice string
	// DialTimeout bounds the connection and WebSocket handshake
	// (<= 0: DefaultDialTimeout).
	DialTimeout time.Duration
	// FirstAudioTimeout bounds the wait from connecting to the first audio
	// (<= 0: DefaultFirstAudioTimeout).
	FirstAudioTimeout time.Duration
	// StallTimeout is the longest wait for the next message once audio
	// flows (<= 0: DefaultStallTimeout).
	StallTimeout time.Duration
	// HTTPClient makes the handshakes (nil: one of the Synthesizer's own
	// that keeps no idle connections, so nothing outlives a call).
	HTTPClient *http.Client
	// Logger gets warnings (a language the model does not speak) and a
	// debug line per utterance; nil is slog.Default().
	Logger *slog.Logger
}

// Synthesizer speaks text with ElevenLabs, one WebSocket per Synthesize.
// It is safe for concurrent use.
type Synthesizer struct {
	base    string // ws(s)://host[/prefix], no trailing slash
	baseErr error  // a BaseURL that cannot be used
	key     string
	model   string
	voice   string
	dialT   time.Duration
	firstT  time.Duration
	stallT  time.Duration
	http    *http.Client
	log     *slog.Logger

	mu     sync.Mutex
	warned map[string]bool // languages already warned about
}

var _ tts.Synthesizer = (*Synthesizer)(nil)

// New returns a Synthesizer for c. It connects to nothing until
// Synthesize; a BaseURL it cannot use makes every Synthesize fail with
// tts.ErrUnavailable.
func New(c Config) *Synthesizer {
	s := &Synthesizer{
		key:    c.APIKey,
		model:  cmp.Or(c.Model, DefaultModel),
		voice:  cmp.Or(c.Voice, DefaultVoice),
		dialT:  positive(c.DialTimeout, DefaultDialTimeout),
		firstT: positive(c.FirstAudioTimeout, DefaultFirstAudioTimeout),
		stallT: positive(c.StallTimeout, DefaultStallTimeout),
		http:   c.HTTPClient,
		log:    c.Logger,
		warned: map[string]bool{},
	}
	s.base, s.baseErr = baseURL(cmp.Or(c.BaseURL, DefaultBaseURL))
	if s.http == nil {
		// Each socket takes its connection over for good, so there is
		// nothing to pool; a refused handshake's connection is closed
		// rather than left idle.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		s.http = &http.Client{Transport: tr}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// baseURL checks a BaseURL and gives it a WebSocket scheme.
func baseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		return "", fmt.Errorf("BaseURL: %w", err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("BaseURL %q: the scheme must be wss, ws, https or http", raw)
	}
	if u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("BaseURL %q: want scheme://host[/path] only", raw)
	}
	return u.String(), nil
}

// Synthesize speaks r.Text and streams it to out at rate Hz, a chunk per
// message from the API. Empty text, or text of nothing but whitespace and
// control characters, gives no audio and no error.
func (s *Synthesizer) Synthesize(ctx context.Context, r tts.Request, rate int, out func(pcm []int16) error) (tts.Stats, error) {
	if rate <= 0 || rate > maxRate {
		return tts.Stats{}, fmt.Errorf("elevenlabs: sample rate %d Hz is not usable", rate)
	}
	text := Clean(r.Text)
	n := utf8.RuneCountInString(text)
	if n > MaxText {
		return tts.Stats{}, fmt.Errorf("%w: %d characters, ElevenLabs takes at most %d", tts.ErrTextTooLong, n, MaxText)
	}
	if err := ctx.Err(); err != nil {
		return tts.Stats{}, err
	}
	if text == "" {
		return tts.Stats{}, nil
	}
	if s.baseErr != nil {
		return tts.Stats{}, fmt.Errorf("%w: elevenlabs: %w", tts.ErrUnavailable, s.baseErr)
	}
	voice := cmp.Or(r.Voice, s.voice)
	if !voiceID.MatchString(voice) {
		return tts.Stats{}, fmt.Errorf("%w: %q is no ElevenLabs voice id", tts.ErrUnknownVoice, voice)
	}
	format, from := outputFormat(rate)
	u := s.streamURL(voice, format, s.language(r.Language))

	started := time.Now()
	conn, err := s.dial(ctx, u)
	if err != nil {
		return tts.Stats{}, err
	}
	x := &exchange{s: s, conn: conn, from: from, rate: rate, out: out}
	err = x.run(ctx, text, settings(r))
	st := tts.Stats{Audio: time.Duration(x.emitted) * time.Second / time.Duration(rate)}
	if x.sent {
		st.Characters = n
	}
	s.log.Debug("elevenlabs: utterance", "voice", voice, "model", s.model, "format", format,
		"rate", rate, "characters", n, "first_audio", x.firstAudio, "audio", st.Audio,
		"took", time.Since(started), "error", err)
	return st, err
}

// language is the language_code to send for a Request.Language, warning
// once per language the model does not speak.
func (s *Synthesizer) language(tag string) string {
	code, dropped := languageCode(s.model, tag)
	if dropped {
		s.mu.Lock()
		first := !s.warned[tag]
		s.warned[tag] = true
		s.mu.Unlock()
		if first {
			s.log.Warn("elevenlabs: the model does not speak the language; leaving it to detect the language from the text",
				"model", s.model, "language", tag)
		}
	}
	return code
}

func (s *Synthesizer) streamURL(voice, format, lang string) string {
	q := url.Values{}
	q.Set("model_id", s.model)
	q.Set("output_format", format)
	if lang != "" {
		q.Set("language_code", lang)
	}
	return s.base + "/v1/text-to-speech/" + url.PathEscape(voice) + "/stream-input?" + q.Encode()
}

func positive(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
