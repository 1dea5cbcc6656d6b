package openaitest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/fakeapi"
)

// Limits of the API the fake enforces.
const (
	// MaxInputs is the most texts one request may carry.
	MaxInputs = 2048
	// DefaultMaxTokens is how many tokens one text may have.
	DefaultMaxTokens = 8192
	// maxBody bounds the request body read.
	maxBody = 64 << 20
)

// Options shape a Server. The zero value answers every valid request.
type Options struct {
	// Dim is the length of the vectors when a request has no "dimensions"
	// (0: DefaultDim).
	Dim int
	// APIKey, when set, is the only key taken: a request without
	// "Authorization: Bearer APIKey" gets OpenAI's 401.
	APIKey string
	// Fail, when set, is the status every request that passed the key
	// check is answered with, in OpenAI's error body; Message is its
	// message ("": one like OpenAI's for the status).
	Fail    int
	Message string
	// Delay is waited before any answer (not when the client goes away
	// first).
	Delay time.Duration
	// Shuffle lists the data of an answer out of order (each item still
	// carries its right index), as the API allows.
	Shuffle bool
	// IgnoreDimensions answers with Dim-long vectors whatever the request's
	// "dimensions" asks, like servers that do not know the field.
	IgnoreDimensions bool
	// MaxTokens is how many tokens one text may have (0:
	// DefaultMaxTokens); the fake counts a token per four bytes, rounded
	// up.
	MaxTokens int
}

// Request is what the server received.
type Request struct {
	Seq          int // 1 for the first request, 2 for the next, ...
	Method, Path string
	Header       http.Header
	// Auth is the Authorization header ("" when absent).
	Auth string
	// Keys lists the JSON body's top-level keys, sorted (nil when the body
	// is not a JSON object).
	Keys []string
	// The fields of the body, as far as they are of the right type.
	Model          string
	Input          []string // a string input is one text
	EncodingFormat string   // "" when absent
	Dimensions     int      // 0 when absent
	// Status is how the server answered (200 or the error status).
	Status int
}

// Server is a fake OpenAI embeddings server on loopback.
type Server struct {
	// URL is the base URL, ending in /v1 (no trailing slash).
	URL string

	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	requests []Request
}

// New starts a server answering POST /v1/embeddings as o says. It closes
// at t.Cleanup, after dropping any connection still open.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	o.Dim = cmp.Or(o.Dim, DefaultDim)
	o.MaxTokens = cmp.Or(o.MaxTokens, DefaultMaxTokens)
	s := &Server{opts: o}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.srv = fakeapi.StartOpenAI(t, mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Requests returns every embeddings request received, valid or not, in
// order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// apiError is an answer the API gives instead of embeddings.
type apiError struct {
	status               int
	message, param, code string
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Auth: r.Header.Get("Authorization")}
	body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	fail := s.check(&req, body, readErr)
	req.Status = http.StatusOK
	if fail != nil {
		req.Status = fail.status
	}
	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	if !fakeapi.Wait(r, s.opts.Delay) {
		return
	}
	if fail != nil {
		writeError(w, fail.status, fail.message, fail.param, fail.code)
		return
	}
	s.answer(w, req)
}

// check decodes body into req and says how the API would refuse it (nil:
// it would not).
func (s *Server) check(req *Request, body []byte, readErr error) *apiError {
	fields, decodeErr := decode(req, body)
	if s.opts.APIKey != "" {
		key, ok := strings.CutPrefix(req.Auth, "Bearer ")
		switch {
		case !ok || key == "":
			return &apiError{status: http.StatusUnauthorized, message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the basic auth username and password field (i.e. -u YOUR_KEY:), or as the password field (with blank username), or as the username field (with blank password)."}
		case key != s.opts.APIKey:
			return &apiError{status: http.StatusUnauthorized, message: "Incorrect API key provided: " + masked(key) + ". You can find your API key at https://platform.openai.com/account/api-keys.", code: "invalid_api_key"}
		}
	}
	if s.opts.Fail != 0 {
		return &apiError{status: s.opts.Fail, message: cmp.Or(s.opts.Message, failMessage(s.opts.Fail, req.Model))}
	}
	switch {
	case readErr != nil:
		return &apiError{status: http.StatusRequestEntityTooLarge, message: "Request body too large: " + readErr.Error()}
	case decodeErr != nil:
		return decodeErr
	case req.Model == "":
		return &apiError{status: http.StatusBadRequest, message: "you must provide a model parameter"}
	case fields["input"] == nil:
		return &apiError{status: http.StatusBadRequest, message: "Missing required parameter: 'input'.", param: "input", code: "missing_required_parameter"}
	case len(req.Input) == 0:
		return &apiError{status: http.StatusBadRequest, message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."}
	case len(req.Input) > MaxInputs:
		return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf("Invalid 'input': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", MaxInputs, len(req.Input)), param: "input", code: "array_above_max_length"}
	case req.EncodingFormat != "" && req.EncodingFormat != "float" && req.EncodingFormat != "base64":
		return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'float' and 'base64'.", req.EncodingFormat), param: "encoding_format", code: "invalid_value"}
	case fields["dimensions"] != nil && req.Dimensions < 1:
		return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf("Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got %d instead.", req.Dimensions), param: "dimensions", code: "integer_below_min_value"}
	}
	for _, text := range req.Input {
		if text == "" {
			return &apiError{status: http.StatusBadRequest, message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."}
		}
		if n := tokens(text); n > s.opts.MaxTokens {
			return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf("This model's maximum context length is %d tokens, however you requested %d tokens (%d in your prompt; 0 for the completion). Please reduce your prompt; or completion length.", s.opts.MaxTokens, n, n)}
		}
	}
	return nil
}

// decode reads the JSON body into req, returning its fields.
func decode(req *Request, body []byte) (map[string]json.RawMessage, *apiError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, &apiError{status: http.StatusBadRequest, message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"}
	}
	for k := range fields {
		req.Keys = append(req.Keys, k)
	}
	slices.Sort(req.Keys)
	invalidType := func(field, want string) *apiError {
		return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf("Invalid type for '%s': expected %s.", field, want), param: field, code: "invalid_type"}
	}
	if raw := fields["model"]; raw != nil && json.Unmarshal(raw, &req.Model) != nil {
		return fields, invalidType("model", "a string")
	}
	if raw := fields["input"]; raw != nil {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			req.Input = []string{one}
		} else if json.Unmarshal(raw, &req.Input) != nil {
			// Token arrays are valid input to the API, but this fake has no
			// tokenizer to read them with.
			return fields, &apiError{status: http.StatusBadRequest, message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."}
		}
	}
	if raw := fields["encoding_format"]; raw != nil && json.Unmarshal(raw, &req.EncodingFormat) != nil {
		return fields, invalidType("encoding_format", "a string")
	}
	if raw := fields["dimensions"]; raw != nil {
		var d float64
		if json.Unmarshal(raw, &d) != nil || d != math.Trunc(d) || math.Abs(d) > 1<<31 {
			return fields, invalidType("dimensions", "an integer")
		}
		req.Dimensions = int(d)
	}
	return fields, nil
}

// answer writes the embeddings of a valid request.
func (s *Server) answer(w http.ResponseWriter, req Request) {
	dim := s.opts.Dim
	if req.Dimensions > 0 && !s.opts.IgnoreDimensions {
		dim = req.Dimensions
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	used := 0
	for i, text := range req.Input {
		v := Vector(text, dim)
		data[i] = item{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			var b []byte
			for _, x := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(b)
		}
		used += tokens(text)
	}
	if s.opts.Shuffle && len(data) > 1 {
		rng := rand.New(rand.NewPCG(uint64(req.Seq), uint64(len(data))))
		rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
		if slices.IsSortedFunc(data, func(a, b item) int { return a.Index - b.Index }) {
			data[0], data[1] = data[1], data[0]
		}
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": used, "total_tokens": used},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}

// tokens is the fake's count of the tokens of text: one per four bytes.
func tokens(text string) int { return (len(text) + 3) / 4 }

// masked is key as OpenAI quotes it in a 401: its start and end.
func masked(key string) string {
	if len(key) <= 11 {
		return strings.Repeat("*", len(key))
	}
	return key[:7] + strings.Repeat("*", len(key)-11) + key[len(key)-4:]
}

// failMessage is a message like OpenAI's for status.
func failMessage(status int, model string) string {
	switch {
	case status == http.StatusUnauthorized:
		return "Incorrect API key provided."
	case status == http.StatusForbidden:
		return "You are not allowed to sample from this model"
	case status == http.StatusNotFound:
		return fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)
	case status == http.StatusTooManyRequests:
		return fmt.Sprintf("Rate limit reached for %s on requests per min (RPM): Limit 3000, Used 3000, Requested 1. Please try again in 20ms.", model)
	case status == http.StatusServiceUnavailable:
		return "The engine is currently overloaded, please try again later"
	case status >= 500:
		return "The server had an error while processing your request. Sorry about that!"
	}
	return http.StatusText(status)
}

// writeError answers with the embeddings API's error body, which differs
// from fakeapi.WriteOpenAIError's: a 401 keeps a code given, and a 429's
// type is "requests".
func writeError(w http.ResponseWriter, status int, msg, param, code string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		code = cmp.Or(code, "invalid_api_key")
	case status == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nullable(param), "code": nullable(code)},
	})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
