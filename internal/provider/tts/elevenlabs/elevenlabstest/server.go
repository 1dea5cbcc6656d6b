package elevenlabstest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Defaults of the zero Options and Reply.
const (
	// DefaultAPIKey is the key the server expects when Options.APIKey is "".
	DefaultAPIKey = "xi-test-0123456789abcdef"
	// DefaultToneHz is the pitch of the default audio.
	DefaultToneHz = 440.0
	// DefaultPerChar is how much default audio each character of text gets,
	// about the pace of speech.
	DefaultPerChar = 50 * time.Millisecond
	// DefaultChunk is how much audio one message carries.
	DefaultChunk = 100 * time.Millisecond
)

// DefaultVoices are the voice ids the server knows when Options.Voices is
// nil: the API's public premade voices Rachel and George.
var DefaultVoices = []string{"21m00Tcm4TlvDq8ikWAM", "JBFqnCBsd6RMkjVDRZzb"}

// Options configure a Server.
type Options struct {
	// APIKey is the xi-api-key the server accepts ("": DefaultAPIKey).
	APIKey string
	// RejectKey answers a wrong or missing key with a 401 handshake
	// instead of accepting the socket and closing it with 1008.
	RejectKey bool
	// HandshakeStatus, when not 0, answers every handshake with this HTTP
	// status and the API's JSON error body (after the path check).
	HandshakeStatus int
	// Voices are the known voice ids (nil: DefaultVoices).
	Voices []string
	// Reply is how sessions are answered, unless Script is set.
	Reply Reply
	// Script, when set, picks each session's Reply once its first text is
	// generated (on flush or EOS), seeing the session so far. It may be
	// called concurrently.
	Script func(Session) Reply
}

// Reply shapes the server's answer to one session.
type Reply struct {
	// Audio returns the samples to stream for text at rate (nil: a tone of
	// ToneHz lasting PerChar per character, at half of full scale).
	Audio func(rate int, text string) []int16
	// ToneHz is the default audio's pitch (0: DefaultToneHz).
	ToneHz float64
	// PerChar is the default audio per character (0: DefaultPerChar).
	PerChar time.Duration
	// Chunk is the audio each message carries (0: DefaultChunk).
	Chunk time.Duration
	// FirstDelay is waited before the first audio message.
	FirstDelay time.Duration
	// Gap is waited between audio messages.
	Gap time.Duration
	// Hang: once HangAfter audio messages are out, send nothing more and
	// hold the socket open until the client closes it.
	Hang      bool
	HangAfter int
	// Fail reports an error once Fail.After audio messages are out.
	Fail *Failure
}

// Failure is an error the server reports mid-session. Both checks, Hang
// and Fail, happen before each audio message and before the final one, so
// an After beyond the audio fires just before {"isFinal":true}.
type Failure struct {
	// After is how many audio messages go out first.
	After int
	// Message and Error, when Message is not "", are sent as the API's
	// error message {"message":Message,"error":Error,"code":1008}.
	Message, Error string
	// CloseCode closes the socket after the message (0: 1008, or no close
	// frame at all with Drop). CloseReason is its reason ("": Message).
	CloseCode   int
	CloseReason string
	// Drop ends the connection without a close frame instead.
	Drop bool
}

// Server is a fake ElevenLabs stream-input WebSocket server on 127.0.0.1.
type Server struct {
	// URL is the base URL, "ws://127.0.0.1:port" (no trailing slash): the
	// client's BaseURL.
	URL string

	opts   Options
	voices map[string]bool
	srv    *httptest.Server
	ctx    context.Context // ends at cleanup, unblocking every session
	cancel context.CancelFunc
	wg     sync.WaitGroup // sessions still running

	mu       sync.Mutex
	sessions []*Session
}

// New starts a server. It closes at t.Cleanup, after dropping every
// session still open and waiting for its goroutine.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	if o.APIKey == "" {
		o.APIKey = DefaultAPIKey
	}
	if o.Voices == nil {
		o.Voices = DefaultVoices
	}
	s := &Server{opts: o, voices: map[string]bool{}}
	for _, v := range o.Voices {
		s.voices[v] = true
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = "ws" + strings.TrimPrefix(s.srv.URL, "http")
	t.Cleanup(func() {
		s.cancel()
		// Close waits for handlers that have not taken over their
		// connection yet; each did wg.Add first, so Wait sees them all.
		s.srv.Close()
		s.wg.Wait()
	})
	return s
}

// Sessions returns a copy of every session so far, in the order their
// handshakes arrived, including those still running.
func (s *Server) Sessions() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, len(s.sessions))
	for i, ss := range s.sessions {
		out[i] = ss.clone()
	}
	return out
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	voice, ok := voiceFromPath(r.URL.Path)
	if !ok || r.Method != http.MethodGet {
		writeDetail(w, http.StatusNotFound, "not_found", "Not Found")
		return
	}
	if s.opts.HandshakeStatus != 0 {
		writeDetail(w, s.opts.HandshakeStatus, statusName(s.opts.HandshakeStatus), http.StatusText(s.opts.HandshakeStatus))
		return
	}
	key := r.Header.Get("xi-api-key")
	if key != s.opts.APIKey && s.opts.RejectKey {
		writeDetail(w, http.StatusUnauthorized, "invalid_api_key", "Invalid API key")
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)

	q := r.URL.Query()
	sess := &Session{
		Voice:        voice,
		Query:        q,
		Header:       r.Header.Clone(),
		APIKey:       key,
		Model:        q.Get("model_id"),
		OutputFormat: q.Get("output_format"),
		Language:     q.Get("language_code"),
	}
	s.mu.Lock()
	s.sessions = append(s.sessions, sess)
	s.mu.Unlock()
	(&session{srv: s, c: c, rec: sess}).run()
}

// voiceFromPath takes the voice id out of /v1/text-to-speech/{id}/stream-input.
func voiceFromPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/v1/text-to-speech/")
	if !ok {
		return "", false
	}
	voice, ok := strings.CutSuffix(rest, "/stream-input")
	if !ok || voice == "" || strings.Contains(voice, "/") {
		return "", false
	}
	return voice, true
}

// writeDetail answers a handshake with the API's HTTP error body.
func writeDetail(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"detail": map[string]string{"status": status, "message": msg},
	})
}

func statusName(code int) string {
	switch {
	case code == http.StatusUnauthorized:
		return "invalid_api_key"
	case code == http.StatusTooManyRequests:
		return "too_many_concurrent_requests"
	case code >= 500:
		return "internal_error"
	}
	return "error"
}
