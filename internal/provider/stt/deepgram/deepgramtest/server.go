package deepgramtest

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const (
	// DefaultAPIKey is the key the server accepts when Options.APIKey is "".
	DefaultAPIKey = "deepgram-test-key"
	// DefaultTranscript is the text of every stream when Options.Transcript
	// is nil: two sentences, so two final results.
	DefaultTranscript = "Hello there. How can I help you today?"
)

// Options shape the server's behaviour. The zero value accepts
// DefaultAPIKey and answers every stream with DefaultTranscript.
type Options struct {
	// APIKey is the key expected in "Authorization: Token <key>"
	// ("": DefaultAPIKey). Other keys are refused with 401, as Deepgram
	// does: {"err_code":"INVALID_AUTH","err_msg":"Invalid credentials."}.
	APIKey string
	// Transcript chooses a stream's text (nil: DefaultTranscript). It is
	// called once per stream, at its first Finalize or CloseStream, with
	// the stream as received so far; it may be called concurrently.
	Transcript func(s StreamInfo) string
	// Languages, when not empty, are the language tags served; a
	// handshake asking for another is refused with 400 "No such
	// model/language/tier combination found." (Deepgram's message).
	Languages []string
	// RefuseStatus, when not 0, refuses every handshake with a valid key
	// with this HTTP status and RefuseMessage ("": the status text), in
	// the dg-error header and the JSON body.
	RefuseStatus  int
	RefuseMessage string
	// CloseCode, when not 0, closes each stream with this WebSocket close
	// code (e.g. 1008, 1011) and CloseReason (e.g. "DATA-0000") once
	// CloseAfter bytes of audio have arrived (0: right after the
	// handshake).
	CloseCode   int
	CloseReason string
	CloseAfter  int
	// FinalDelay is waited after Finalize or CloseStream before the
	// results are sent.
	FinalDelay time.Duration
	// Hang: accept streams and record them, but never send anything nor
	// close (CloseCode and IdleTimeout do not apply); the stream ends when
	// the client goes away.
	Hang bool
	// IdleTimeout, when not 0, closes a stream that received no message
	// for that long with 1011 "NET-0001", as Deepgram does after 10 s.
	IdleTimeout time.Duration
	// Extra are raw text messages sent after a stream's first audio
	// message: interim results, SpeechStarted, UtteranceEnd, ... for
	// tests that a client ignores what it should.
	Extra []string
}

// StreamInfo is what the server saw of one handshake and its stream.
type StreamInfo struct {
	// RequestID is the dg-request-id header the server answered with.
	RequestID string
	// Status is 101 when the stream was accepted, else the status of the
	// refusal.
	Status int
	Query  url.Values
	Header http.Header
	// Model, Language and SampleRate are read from Query ("" and 0 when
	// absent).
	Model      string
	Language   string
	SampleRate int
	// Audio is every sample received, in order: the binary messages
	// concatenated and read as little-endian int16.
	Audio []int16
	// AudioBytes counts the bytes of audio, AudioMessages the non-empty
	// binary messages and EmptyMessages the empty ones (which Deepgram,
	// and this server, take as the end of the stream).
	AudioBytes    int
	AudioMessages int
	EmptyMessages int
	// Controls are the text messages received, in order: their "type"
	// (KeepAlive, Finalize, CloseStream) or, for anything that is not a
	// JSON object with a type, the whole text.
	Controls []string
	// Transcript is the text answered ("" until Finalize or CloseStream).
	Transcript string
	// End says how the stream ended ("" while it runs): "CloseStream"
	// (answered and closed normally), "closed <code> <reason>" (an error
	// close: CloseCode, IdleTimeout or undecodable audio), "client gone"
	// (the connection dropped), "client closed <code>" (a close frame from
	// the client), "server shut down".
	End string
}

// Server is a fake Deepgram live-streaming API on loopback.
type Server struct {
	// URL is the base URL, ws://127.0.0.1:<port>: the client adds
	// /v1/listen.
	URL string

	srv      *httptest.Server
	ctx      context.Context // canceled when the test ends
	stop     context.CancelFunc
	sessions sync.WaitGroup

	mu      sync.Mutex
	opts    Options
	streams []*record
}

// record is one stream's StreamInfo as it grows, under Server.mu.
type record struct {
	info  StreamInfo
	audio []byte
}

// New starts a server with o. It is closed when the test ends, after every
// stream still open is dropped.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{opts: o}
	s.ctx, s.stop = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/listen", s.listen)
	s.srv = httptest.NewServer(mux)
	s.URL = "ws://" + strings.TrimPrefix(s.srv.URL, "http://")
	t.Cleanup(func() {
		s.stop()
		// httptest does not wait for hijacked connections: sessions do.
		s.sessions.Wait()
		s.srv.Close()
	})
	return s
}

// SetOptions replaces the options for streams that start afterwards.
func (s *Server) SetOptions(o Options) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = o
}

// Streams returns every handshake received, refused ones included, in
// order, as they are now.
func (s *Server) Streams() []StreamInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StreamInfo, len(s.streams))
	for i, r := range s.streams {
		out[i] = r.snapshot()
	}
	return out
}

// snapshot copies r's info, decoding the audio. Callers hold Server.mu.
func (r *record) snapshot() StreamInfo {
	in := r.info
	in.Query = cloneValues(in.Query)
	in.Header = in.Header.Clone()
	in.Controls = slices.Clone(in.Controls)
	in.Audio = make([]int16, len(r.audio)/2)
	for i := range in.Audio {
		in.Audio[i] = int16(binary.LittleEndian.Uint16(r.audio[2*i:]))
	}
	return in
}

// update changes r under the server's lock.
func (s *Server) update(r *record, f func(*record)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(r)
}

// listen is the handshake of GET /v1/listen.
func (s *Server) listen(w http.ResponseWriter, r *http.Request) {
	s.sessions.Add(1)
	defer s.sessions.Done()
	q := r.URL.Query()
	rate, _ := strconv.Atoi(q.Get("sample_rate"))
	s.mu.Lock()
	o := s.opts
	rec := &record{info: StreamInfo{
		RequestID:  fmt.Sprintf("00000000-0000-4000-8000-%012d", len(s.streams)+1),
		Query:      q,
		Header:     r.Header.Clone(),
		Model:      q.Get("model"),
		Language:   q.Get("language"),
		SampleRate: rate,
	}}
	s.streams = append(s.streams, rec)
	s.mu.Unlock()
	w.Header().Set("dg-request-id", rec.info.RequestID)

	refuse := func(status int, code, msg string) {
		s.update(rec, func(r *record) { r.info.Status = status })
		w.Header().Set("dg-error", msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(errorBody(code, msg, rec.info.RequestID))
	}
	scheme, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	want := o.APIKey
	if want == "" {
		want = DefaultAPIKey
	}
	if !strings.EqualFold(scheme, "token") || key != want {
		refuse(http.StatusUnauthorized, "INVALID_AUTH", "Invalid credentials.")
		return
	}
	if o.RefuseStatus != 0 {
		msg := o.RefuseMessage
		if msg == "" {
			msg = http.StatusText(o.RefuseStatus)
		}
		refuse(o.RefuseStatus, http.StatusText(o.RefuseStatus), msg)
		return
	}
	if q.Has("encoding") && rate <= 0 {
		refuse(http.StatusBadRequest, "Bad Request", "Bad Request: sample_rate is required for raw audio encodings.")
		return
	}
	if lang := q.Get("language"); len(o.Languages) > 0 && !slices.Contains(o.Languages, lang) {
		refuse(http.StatusBadRequest, "Bad Request", "Bad Request: No such model/language/tier combination found.")
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered (not a WebSocket handshake, ...)
	}
	s.update(rec, func(r *record) { r.info.Status = http.StatusSwitchingProtocols })
	(&session{srv: s, rec: rec, opts: o, conn: conn}).run(s.ctx)
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}
