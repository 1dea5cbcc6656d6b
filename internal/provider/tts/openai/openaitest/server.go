package openaitest

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/media/audio"

	"github.com/parley-voice/parley/internal/fakeapi"
)

// Rate is the sample rate of the audio the server sends.
const Rate = 24000

// DefaultChunkBytes is the size of the pieces the audio is written in when
// Reply.ChunkBytes is 0: 100 ms.
const DefaultChunkBytes = Rate / 10 * 2

// Voices are the built-in voices the API accepts.
var Voices = []string{"alloy", "ash", "ballad", "cedar", "coral", "echo", "fable", "marin", "nova", "onyx", "sage", "shimmer", "verse"}

// Speech is the default audio for text: a 440 Hz tone at half scale,
// 50 ms per character (rune) and at least 200 ms, at Rate.
func Speech(text string) []int16 { return SpeechAt(text, Rate) }

// SpeechAt is Speech at another sample rate.
func SpeechAt(text string, rate int) []int16 {
	d := max(time.Duration(utf8.RuneCountInString(text))*50*time.Millisecond, 200*time.Millisecond)
	return audio.Tone(440, rate, d, 0.5)
}

// Formats the server answers in.
const (
	FormatPCM = "pcm" // raw 16-bit little-endian samples, Content-Type audio/pcm
	FormatWAV = "wav" // a streaming WAV: header, then the samples, Content-Type audio/wav
)

// known are the body fields of OpenAI's speech API.
var known = map[string]bool{"model": true, "input": true, "voice": true, "response_format": true, "speed": true,
	"instructions": true, "stream_format": true}

// Request is what the server received, decoded from the real JSON body.
type Request struct {
	Method, Path string
	Header       http.Header
	// Body is the whole JSON body, for fields not decoded below.
	Body           map[string]any
	Model          string
	Input          string
	Voice          string
	ResponseFormat string
	Speed          *float64 // nil when absent
	Instructions   string
	SampleRate     *int // nil when absent: speaches' field, not OpenAI's
}

// Reply is how the server answers one valid request.
type Reply struct {
	// PCM is the audio sent, at Reply.Rate (nil: SpeechAt the input and
	// that rate; empty: none, a 200 with an empty body).
	PCM []int16
	// Rate is PCM's sample rate, written in a WAV's header (0: Rate).
	Rate int
	// Format is what is sent: FormatPCM or FormatWAV ("": the
	// response_format asked for), so a server that ignores the request's
	// format can be played.
	Format string
	// ChunkBytes is the size of each write (0: DefaultChunkBytes). An odd
	// size splits samples between writes.
	ChunkBytes int
	// ChunkGap is waited between chunks.
	ChunkGap time.Duration
	// Delay is waited before the response headers.
	Delay time.Duration
	// Status other than 0 and 200 answers with an error JSON body
	// {"error":{"message":Message,...}} instead.
	Status  int
	Message string
	// Hang: stall. With PCM nil, send the response headers and then
	// nothing; otherwise send PCM, then nothing. The connection is held
	// open until the client goes away.
	Hang bool
}

// Server is a fake OpenAI speech server on loopback.
type Server struct {
	// URL is the base URL, ending in /v1 (no trailing slash).
	URL string

	srv    *httptest.Server
	script func(Request) Reply
	strict bool

	mu       sync.Mutex
	requests []Request
	done     int
}

// Option changes how a Server validates.
type Option func(*Server)

// Strict refuses body fields the API does not define (sample_rate, ...)
// with 400 "Unrecognized request argument supplied: <field>", as a strict
// OpenAI-compatible server may; by default they are taken, and recorded,
// as Kokoro-FastAPI does.
func Strict() Option { return func(s *Server) { s.strict = true } }

// New starts a server answering every valid speech request with script (it
// may be called concurrently). The server closes at t.Cleanup, after any
// connection still open is dropped.
func New(t testing.TB, script func(Request) Reply, opts ...Option) *Server {
	t.Helper()
	s := &Server{script: script}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/speech", s.speech)
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

// Done is how many answers were sent to the end, audio and all.
func (s *Server) Done() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

func (s *Server) speech(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	err := decode(r, &req)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if err == nil {
		err = validate(req)
	}
	if err == nil && s.strict {
		for k := range req.Body {
			if !known[k] {
				err = &requestError{message: "Unrecognized request argument supplied: " + k}
				break
			}
		}
	}
	if err != nil {
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, err.message, err.param, err.code)
		return
	}

	reply := s.script(req)
	if !fakeapi.Wait(r, reply.Delay) {
		return
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		fakeapi.WriteOpenAIError(w, reply.Status, cmp.Or(reply.Message, http.StatusText(reply.Status)), "", "")
		return
	}
	rate := cmp.Or(reply.Rate, Rate)
	pcm := reply.PCM
	if pcm == nil && !reply.Hang {
		pcm = SpeechAt(req.Input, rate)
	}
	format := cmp.Or(reply.Format, req.ResponseFormat)
	var data []byte
	if format == FormatWAV {
		w.Header().Set("Content-Type", "audio/wav")
		data = wavHeader(rate)
	} else {
		w.Header().Set("Content-Type", "audio/pcm")
	}
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	flusher.Flush()
	data = slices.Grow(data, 2*len(pcm))
	for _, x := range pcm {
		data = binary.LittleEndian.AppendUint16(data, uint16(x))
	}
	for i, chunk := range slices.Collect(slices.Chunk(data, cmp.Or(reply.ChunkBytes, DefaultChunkBytes))) {
		if i > 0 && !fakeapi.Wait(r, reply.ChunkGap) {
			return
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		flusher.Flush()
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	s.mu.Lock()
	s.done++
	s.mu.Unlock()
}

// requestError is a request the API would refuse with 400.
type requestError struct{ message, param, code string }

// decode reads the JSON body into req.
func decode(r *http.Request, req *Request) *requestError {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return &requestError{message: "could not read the request body"}
	}
	if err := json.Unmarshal(body, &req.Body); err != nil {
		return &requestError{message: "We could not parse the JSON body of your request: " + err.Error()}
	}
	var b struct {
		Model          string   `json:"model"`
		Input          string   `json:"input"`
		Voice          any      `json:"voice"`
		ResponseFormat string   `json:"response_format"`
		Speed          *float64 `json:"speed"`
		Instructions   string   `json:"instructions"`
		SampleRate     *int     `json:"sample_rate"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return &requestError{message: "Invalid type in the request body: " + err.Error()}
	}
	req.Model, req.Input, req.ResponseFormat, req.Speed, req.Instructions = b.Model, b.Input, b.ResponseFormat, b.Speed, b.Instructions
	req.SampleRate = b.SampleRate
	req.Voice, _ = b.Voice.(string) // custom voices, {"id": ...}, are not served
	return nil
}

// validate refuses what the API refuses.
func validate(req Request) *requestError {
	switch {
	case req.Model == "":
		return &requestError{message: "you must provide a model parameter", param: "model"}
	case req.Input == "":
		return &requestError{message: "Missing required parameter: 'input'.", param: "input", code: "missing_required_parameter"}
	case utf8.RuneCountInString(req.Input) > 4096:
		return &requestError{message: "String should have at most 4096 characters", param: "input", code: "string_too_long"}
	case !slices.Contains(Voices, req.Voice):
		return &requestError{
			message: fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s'.", req.Voice, strings.Join(Voices, "', '")),
			param:   "voice", code: "invalid_value",
		}
	case req.ResponseFormat != FormatPCM && req.ResponseFormat != FormatWAV:
		return &requestError{message: fmt.Sprintf("openaitest serves response_format 'pcm' and 'wav' only, not '%s'", req.ResponseFormat), param: "response_format", code: "invalid_value"}
	case req.Speed != nil && (*req.Speed < 0.25 || *req.Speed > 4):
		return &requestError{message: fmt.Sprintf("%g is greater than the maximum of 4 or less than the minimum of 0.25 - 'speed'", *req.Speed), param: "speed"}
	}
	return nil
}

// wavHeader is the header of a mono 16-bit WAV at rate as a streaming
// encoder writes it (ffmpeg to a pipe, PyAV): the sizes it cannot know yet
// are 0xFFFFFFFF, and a LIST chunk of tags comes before the data.
func wavHeader(rate int) []byte {
	le := binary.LittleEndian
	b := []byte("RIFF\xff\xff\xff\xffWAVEfmt ")
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1) // PCM
	b = le.AppendUint16(b, 1) // mono
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(2*rate))
	b = le.AppendUint16(b, 2)
	b = le.AppendUint16(b, 16)
	tags := "INFOISFT\x0e\x00\x00\x00openaitest 1\x00\x00"
	b = append(b, "LIST"...)
	b = le.AppendUint32(b, uint32(len(tags)))
	b = append(b, tags...)
	b = append(b, "data\xff\xff\xff\xff"...)
	return b
}
