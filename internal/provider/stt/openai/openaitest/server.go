package openaitest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"

	"github.com/parley-voice/parley/internal/fakeapi"
)

// maxUpload is the API's request limit.
const maxUpload = 25 << 20

// Request is what the server received, decoded from the real form.
type Request struct {
	Method, Path string
	Header       http.Header
	// Fields holds every text field of the form.
	Fields         map[string][]string
	Model          string
	Language       string // "" when the field was absent
	ResponseFormat string // "" when the field was absent
	// The file part: its filename and Content-Type, and the audio in it.
	Filename    string
	ContentType string
	Rate        int
	Channels    int
	Samples     []int16 // the first channel
}

// Reply is how the server answers one valid request.
type Reply struct {
	// Text is the transcript.
	Text string
	// Status other than 0 and 200 answers with an error JSON body
	// {"error":{"message":Message,...}} instead.
	Status  int
	Message string
	// Delay is waited before answering.
	Delay time.Duration
	// Hang: answer nothing, not even the headers, until the client goes
	// away.
	Hang bool
}

// Server is a fake OpenAI transcription server on loopback.
type Server struct {
	// URL is the base URL, ending in /v1 (no trailing slash).
	URL string

	srv    *httptest.Server
	script func(Request) Reply

	realtime bool
	dialect  Dialect
	ctx      context.Context // ends realtime sessions at the test's end
	live     sync.WaitGroup  // realtime sessions running

	mu       sync.Mutex
	requests []Request
	sessions []*RealtimeSession
}

// New starts a server answering every valid transcription request, and
// every segment of a realtime session (with the Realtime option), with
// script (it may be called concurrently). The server closes at t.Cleanup,
// after any connection still open is dropped.
func New(t testing.TB, script func(Request) Reply, opts ...Option) *Server {
	t.Helper()
	s := &Server{script: script}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcriptions)
	if s.realtime {
		var stop context.CancelFunc
		s.ctx, stop = context.WithCancel(context.Background())
		mux.HandleFunc("GET /v1/realtime", func(w http.ResponseWriter, r *http.Request) {
			s.live.Add(1)
			defer s.live.Done()
			s.realtimeSession(w, r)
		})
		// A WebSocket outlives the HTTP server's Close: end the sessions.
		t.Cleanup(func() {
			stop()
			s.live.Wait()
		})
	}
	s.srv = fakeapi.StartOpenAI(t, mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Requests returns every request received, valid or not, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

var iso6391 = regexp.MustCompile(`^[a-z]{2}$`)

func (s *Server) transcriptions(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	err := decode(r, &req)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	switch {
	case err != nil:
		fakeapi.WriteOpenAIError(w, err.status, err.message, err.param, err.code)
		return
	case req.Model == "":
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, "you must provide a model parameter", "model", "")
		return
	case req.Language != "" && !iso6391.MatchString(req.Language):
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, fmt.Sprintf("Invalid language '%s'. Language parameter must be specified in ISO-639-1 format.", req.Language), "language", "invalid_language_format")
		return
	}
	format := req.ResponseFormat
	switch format {
	case "", "json", "verbose_json":
		format = "json"
	case "text":
	default:
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, fmt.Sprintf("Invalid value: '%s'. Supported values are: 'json', 'text' and 'verbose_json'.", format), "response_format", "invalid_value")
		return
	}

	reply := s.script(req)
	if !fakeapi.Wait(r, reply.Delay) {
		return
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		fakeapi.WriteOpenAIError(w, reply.Status, cmp.Or(reply.Message, http.StatusText(reply.Status)), "", "")
		return
	}
	if format == "text" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, reply.Text+"\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"text": reply.Text,
		"usage": map[string]any{
			"type": "tokens", "input_tokens": len(req.Samples) / 1600, "output_tokens": len(reply.Text) / 4,
		},
	})
}

// requestError is a request the API would refuse.
type requestError struct {
	status               int
	message, param, code string
}

// decode reads the multipart form into req.
func decode(r *http.Request, req *Request) *requestError {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return &requestError{status: http.StatusBadRequest, message: "Invalid Content-Type header (" + mt + "), expected multipart/form-data."}
	}
	if err := r.ParseMultipartForm(maxUpload); err != nil {
		return &requestError{status: http.StatusBadRequest, message: "Could not parse multipart form: " + err.Error()}
	}
	f := r.MultipartForm
	defer func() { _ = f.RemoveAll() }() // temporary files of large parts
	req.Fields = f.Value
	req.Model = first(f.Value["model"])
	req.Language = first(f.Value["language"])
	req.ResponseFormat = first(f.Value["response_format"])
	files := f.File["file"]
	if len(files) != 1 {
		return &requestError{status: http.StatusBadRequest, message: "you must provide exactly one file", param: "file"}
	}
	req.Filename = files[0].Filename
	req.ContentType = files[0].Header.Get("Content-Type")
	file, err := files[0].Open()
	if err != nil {
		return &requestError{status: http.StatusInternalServerError, message: err.Error()}
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return &requestError{status: http.StatusInternalServerError, message: err.Error()}
	}
	w, err := audio.ReadWAV(bytes.NewReader(data))
	if err != nil {
		return &requestError{status: http.StatusBadRequest, message: "Audio file might be corrupted or unsupported", param: "file", code: "invalid_value"}
	}
	req.Rate, req.Channels, req.Samples = w.Rate, len(w.Channels), w.Channels[0]
	return nil
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
