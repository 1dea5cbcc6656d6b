package llmtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// post sends body to the server's chat completions endpoint.
func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads an SSE body: the data of every event, in order.
func events(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		out = append(out, data)
	}
	return out
}

func TestStreamWire(t *testing.T) {
	s := New(t, func(Request) Reply {
		return Reply{
			Text:      []string{"Hi"},
			ToolCalls: []ToolCallReply{{ID: "call_1", Name: "end_call", Arguments: `{"reason":"done"}`}},
			Usage:     &Usage{PromptTokens: 10, CompletionTokens: 5, CachedTokens: 8},
		}
	})
	resp := post(t, s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type = %q", ct)
	}
	evs := events(t, resp.Body)
	if evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("last event = %q, want [DONE]", evs[len(evs)-1])
	}
	type chunk struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Role      string `json:"role"`
				Content   *string
				ToolCalls []struct {
					Index    int     `json:"index"`
					ID       *string `json:"id"`
					Function struct {
						Name      *string `json:"name"`
						Arguments string  `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	var chunks []chunk
	for _, ev := range evs[:len(evs)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("object = %q", c.Object)
		}
		chunks = append(chunks, c)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk has no assistant role: %s", evs[0])
	}
	var args string
	var idChunks, toolChunks int
	for _, c := range chunks {
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				toolChunks++
				if tc.ID != nil {
					idChunks++
					if *tc.ID != "call_1" || tc.Function.Name == nil || *tc.Function.Name != "end_call" {
						t.Errorf("first tool-call chunk: id %v name %v", tc.ID, tc.Function.Name)
					}
				}
				args += tc.Function.Arguments
			}
		}
	}
	if idChunks != 1 || toolChunks < 3 || args != `{"reason":"done"}` {
		t.Errorf("tool call in %d chunks (%d with the id), arguments %q", toolChunks, idChunks, args)
	}
	finish := chunks[len(chunks)-2]
	if len(finish.Choices) != 1 || finish.Choices[0].FinishReason == nil || *finish.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish chunk: %s", evs[len(evs)-3])
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.PromptTokens != 10 || last.Usage.PromptTokensDetails.CachedTokens != 8 {
		t.Errorf("usage chunk: %s", evs[len(evs)-2])
	}
	for i, c := range chunks[:len(chunks)-1] {
		if c.Usage != nil {
			t.Errorf("chunk %d carries usage before the last", i)
		}
	}
}

func TestStreamWithoutUsage(t *testing.T) {
	s := New(t, func(Request) Reply { return Reply{Text: []string{"a", "b"}} })
	resp := post(t, s, `{"model":"m","stream":true,"messages":[]}`)
	for _, ev := range events(t, resp.Body) {
		if strings.Contains(ev, `"usage"`) {
			t.Errorf("usage sent unasked: %s", ev)
		}
	}
}

// TestNonStreamWithSDK decodes a non-streamed reply with the real SDK.
func TestNonStreamWithSDK(t *testing.T) {
	s := New(t, func(r Request) Reply {
		return Reply{
			Text:      []string{"Hello ", "there"},
			ToolCalls: []ToolCallReply{{ID: "call_9", Name: "lookup", Arguments: `{"q":1}`}},
			Usage:     &Usage{PromptTokens: 3, CompletionTokens: 2, CachedTokens: 1},
		}
	})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	chat := sdk.NewChatCompletionService(option.WithBaseURL(s.URL), option.WithAPIKey("k"),
		option.WithHTTPClient(&http.Client{Transport: tr}))
	c, err := chat.New(t.Context(), sdk.ChatCompletionNewParams{
		Model:    "m",
		Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := c.Choices[0].Message
	if m.Content != "Hello there" || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Arguments != `{"q":1}` ||
		c.Choices[0].FinishReason != "tool_calls" || c.Usage.PromptTokensDetails.CachedTokens != 1 {
		t.Errorf("completion = %s", c.RawJSON())
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Stream || reqs[0].Header.Get("Authorization") != "Bearer k" {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestErrorStatus(t *testing.T) {
	s := New(t, func(Request) Reply {
		return Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}
	})
	resp := post(t, s, `{"model":"m","stream":true,"messages":[]}`)
	var body struct {
		Error struct{ Message, Type string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized || body.Error.Message != "Incorrect API key provided" || body.Error.Type == "" {
		t.Errorf("%d %+v", resp.StatusCode, body)
	}
}

func TestUnknownPath(t *testing.T) {
	s := New(t, func(Request) Reply { t.Error("script called"); return Reply{} })
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d", resp.StatusCode)
	}
}
