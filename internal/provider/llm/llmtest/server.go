package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/fakeapi"
)

// Request is what the server received, decoded from the real JSON body.
type Request struct {
	Model           string
	Messages        []map[string]any
	Tools           []map[string]any
	Temperature     *float64
	ReasoningEffort string
	Stream          bool
	// IncludeUsage: stream_options.include_usage was true.
	IncludeUsage bool
	// MaxCompletionTokens is max_completion_tokens (0: absent).
	MaxCompletionTokens int
	// ResponseFormat is response_format as sent (nil: absent), e.g.
	// {"type":"json_schema","json_schema":{"name":...,"schema":{...},"strict":true}}.
	ResponseFormat map[string]any
	// Body is the whole JSON body, for fields not decoded above.
	Body   map[string]any
	Header http.Header
}

// Reply is how the server answers one request.
type Reply struct {
	// Text deltas, one chunk each.
	Text []string
	// ToolCalls are streamed as the real API does: id, type and name in the
	// first chunk of each call, the arguments split in about three pieces.
	ToolCalls []ToolCallReply
	// FinishReason overrides the finish reason ("": tool_calls when the
	// reply calls tools, stop otherwise).
	FinishReason string
	// Status other than 0 and 200 answers with an error JSON body
	// {"error":{"message":Message,"type":...}} instead.
	Status int
	// Message is the error message of a non-200 Status ("": a default)
	// or, with StreamError, of the error event sent mid-stream.
	Message string
	// StreamError: after the chunks, send an error event
	// data: {"error":{...}} instead of the finish chunk and [DONE], as
	// the API does when the model fails mid-stream.
	StreamError bool
	// Header is added to the response headers (e.g. Retry-After-Ms).
	Header http.Header
	// Delay is waited before the first chunk (after the response headers
	// of a stream; before anything otherwise).
	Delay time.Duration
	// ChunkGap is waited between chunks.
	ChunkGap time.Duration
	// Hang: stall. With Text and ToolCalls empty, send the response
	// headers and then nothing; otherwise send the role chunk and the
	// scripted chunks, then nothing (no finish chunk, no [DONE]). The
	// connection is held open until the client goes away.
	Hang bool
	// Usage is sent in a final usage chunk when the client asked for it
	// (nil: computed from the lengths of the prompt and the reply).
	Usage *Usage
}

// ToolCallReply is one tool call of a Reply.
type ToolCallReply struct {
	ID, Name, Arguments string
}

// Usage is the token usage a reply reports.
type Usage struct {
	PromptTokens, CompletionTokens, CachedTokens int
}

// Server is a fake OpenAI-compatible chat-completions server on loopback.
type Server struct {
	// URL is the base URL, ending in /v1 (no trailing slash).
	URL string

	srv    *httptest.Server
	script func(Request) Reply

	mu       sync.Mutex
	requests []Request
}

// New starts a server answering every chat completion with script (called
// once per request, retries included; it may be called concurrently). The
// server closes at t.Cleanup, after any connection still open is dropped.
func New(t testing.TB, script func(req Request) Reply) *Server {
	t.Helper()
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	s.srv = fakeapi.StartOpenAI(t, mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, "could not read the request body", "", "")
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		fakeapi.WriteOpenAIError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "", "")
		return
	}
	req.Header = r.Header.Clone()
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()

	reply := s.script(req)
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		if !fakeapi.Wait(r, reply.Delay) {
			return
		}
		msg := reply.Message
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		fakeapi.WriteOpenAIError(w, reply.Status, msg, "", "")
		return
	}
	if !req.Stream {
		if !fakeapi.Wait(r, reply.Delay) {
			return
		}
		if reply.Hang {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(completion(req, reply))
		return
	}
	s.stream(w, r, req, reply)
}

// stream answers a streaming request with Server-Sent Events.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	if !fakeapi.Wait(r, reply.Delay) {
		return
	}
	events := chunks(req, reply)
	for i, ev := range events {
		if i > 0 && !fakeapi.Wait(r, reply.ChunkGap) {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", ev); err != nil {
			return
		}
		flusher.Flush()
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.StreamError {
		return // the error event was the last one; the API sends no [DONE]
	}
	if !fakeapi.Wait(r, reply.ChunkGap) {
		return
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// Turns is how many times the caller has spoken in the conversation so far:
// runs of user messages, so a turn the engine heard in pieces before the
// agent answered (the caller paused mid-sentence; the engine dropped the
// reply it had started and asked again with both pieces) counts once, as
// a real model would read it. Scripted models pick their line by it.
func (r Request) Turns() int {
	n, prev := 0, ""
	for _, m := range r.Messages {
		role, _ := m["role"].(string)
		if role == "user" && prev != "user" {
			n++
		}
		prev = role
	}
	return n
}
