package openaitest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// post sends body to the server's path with the Authorization header auth
// ("" for none).
func post(t *testing.T, s *Server, path, auth, body string) *http.Response {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type item struct {
	Object    string
	Index     int
	Embedding json.RawMessage
}

type answer struct {
	Object string
	Data   []item
	Model  string
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
}

type errorBody struct {
	Error struct {
		Message, Type string
		Param, Code   *string
	}
}

func decodeAs[T any](t *testing.T, resp *http.Response) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func floats(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestEmbeddings(t *testing.T) {
	s := New(t, Options{Dim: 32})
	resp := post(t, s, "/embeddings", "Bearer anything", `{"model":"m1","input":["hello world","goodbye"],"encoding_format":"float"}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	a := decodeAs[answer](t, resp)
	if a.Object != "list" || a.Model != "m1" || len(a.Data) != 2 || a.Usage.PromptTokens != 5 || a.Usage.TotalTokens != 5 {
		t.Errorf("answer %+v", a)
	}
	for i, text := range []string{"hello world", "goodbye"} {
		d := a.Data[i]
		if d.Object != "embedding" || d.Index != i || !slices.Equal(floats(t, d.Embedding), Vector(text, 32)) {
			t.Errorf("item %d: %+v", i, d)
		}
	}
	want := Request{
		Seq: 1, Method: http.MethodPost, Path: "/v1/embeddings", Auth: "Bearer anything",
		Keys: []string{"encoding_format", "input", "model"}, Model: "m1", Input: []string{"hello world", "goodbye"},
		EncodingFormat: "float", Status: 200,
	}
	got := s.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	got[0].Header = nil
	if diff := cmp.Diff(want, got[0]); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestStringInputAndDimensions(t *testing.T) {
	s := New(t, Options{})
	a := decodeAs[answer](t, post(t, s, "/embeddings", "", `{"model":"m","input":"one text","dimensions":12}`))
	if len(a.Data) != 1 || !slices.Equal(floats(t, a.Data[0].Embedding), Vector("one text", 12)) {
		t.Errorf("answer %+v", a)
	}
	if r := s.Requests()[0]; r.Dimensions != 12 || !slices.Equal(r.Input, []string{"one text"}) || r.EncodingFormat != "" {
		t.Errorf("request %+v", r)
	}
	// Ignored: the server's own length.
	s = New(t, Options{Dim: 8, IgnoreDimensions: true})
	a = decodeAs[answer](t, post(t, s, "/embeddings", "", `{"model":"m","input":["x y"],"dimensions":12}`))
	if got := floats(t, a.Data[0].Embedding); len(got) != 8 {
		t.Errorf("IgnoreDimensions: %d numbers", len(got))
	}
}

func TestBase64(t *testing.T) {
	s := New(t, Options{Dim: 16})
	a := decodeAs[answer](t, post(t, s, "/embeddings", "", `{"model":"m","input":["base sixty four"],"encoding_format":"base64"}`))
	var enc string
	if err := json.Unmarshal(a.Data[0].Embedding, &enc); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(raw)/4)
	_ = binary.Read(bytes.NewReader(raw), binary.LittleEndian, got)
	if !slices.Equal(got, Vector("base sixty four", 16)) {
		t.Errorf("base64 decodes to %v", got)
	}
}

func TestShuffle(t *testing.T) {
	s := New(t, Options{Dim: 8, Shuffle: true})
	texts := []string{"alpha", "bravo", "charlie", "delta", "echo"}
	body, _ := json.Marshal(map[string]any{"model": "m", "input": texts})
	for range 3 {
		a := decodeAs[answer](t, post(t, s, "/embeddings", "", string(body)))
		var order []int
		for _, d := range a.Data {
			order = append(order, d.Index)
			if !slices.Equal(floats(t, d.Embedding), Vector(texts[d.Index], 8)) {
				t.Errorf("item of index %d has another text's vector", d.Index)
			}
		}
		if slices.IsSorted(order) || len(order) != len(texts) {
			t.Errorf("order %v, want all, shuffled", order)
		}
	}
	// Two items are always swapped.
	a := decodeAs[answer](t, post(t, s, "/embeddings", "", `{"model":"m","input":["a","b"]}`))
	if a.Data[0].Index != 1 || a.Data[1].Index != 0 {
		t.Errorf("two items in order %d, %d", a.Data[0].Index, a.Data[1].Index)
	}
}

func TestRefusals(t *testing.T) {
	s := New(t, Options{MaxTokens: 4})
	for _, tc := range []struct {
		path, body string
		status     int
		message    string
		param      string
	}{
		{"/embeddings", `not json`, 400, "We could not parse the JSON body", ""},
		{"/embeddings", `null`, 400, "We could not parse the JSON body", ""},
		{"/embeddings", `{"input":["a"]}`, 400, "you must provide a model parameter", ""},
		{"/embeddings", `{"model":7,"input":["a"]}`, 400, "Invalid type for 'model'", "model"},
		{"/embeddings", `{"model":"m"}`, 400, "Missing required parameter: 'input'.", "input"},
		{"/embeddings", `{"model":"m","input":[]}`, 400, "'$.input' is invalid", ""},
		{"/embeddings", `{"model":"m","input":["a",""]}`, 400, "'$.input' is invalid", ""},
		{"/embeddings", `{"model":"m","input":[[1,2,3]]}`, 400, "'$.input' is invalid", ""},
		{"/embeddings", `{"model":"m","input":["` + strings.Repeat("x", 17) + `"]}`, 400, "This model's maximum context length is 4 tokens, however you requested 5 tokens", ""},
		{"/embeddings", `{"model":"m","input":["a"],"encoding_format":"int8"}`, 400, "Invalid value: 'int8'. Supported values are: 'float' and 'base64'.", "encoding_format"},
		{"/embeddings", `{"model":"m","input":["a"],"dimensions":0}`, 400, "Expected a value >= 1, but got 0 instead.", "dimensions"},
		{"/embeddings", `{"model":"m","input":["a"],"dimensions":1.5}`, 400, "Invalid type for 'dimensions'", "dimensions"},
		{"/embeddings", `{"model":"m","input":["a"],"dimensions":"8"}`, 400, "Invalid type for 'dimensions'", "dimensions"},
		{"/embedding", `{"model":"m","input":["a"]}`, 404, "Invalid URL (POST /v1/embedding)", ""},
	} {
		resp := post(t, s, tc.path, "", tc.body)
		e := decodeAs[errorBody](t, resp)
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != tc.status || !strings.Contains(e.Error.Message, tc.message) || param != tc.param || e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %+v, want %d %q (param %q)", tc.body, resp.StatusCode, e, tc.status, tc.message, tc.param)
		}
	}
	big, _ := json.Marshal(map[string]any{"model": "m", "input": slices.Repeat([]string{"a"}, MaxInputs+1)})
	if resp := post(t, s, "/embeddings", "", string(big)); resp.StatusCode != 400 || !strings.Contains(decodeAs[errorBody](t, resp).Error.Message, "maximum length 2048") {
		t.Errorf("%d inputs: %s", MaxInputs+1, resp.Status)
	}
}

func TestAuth(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnop"
	s := New(t, Options{APIKey: key})
	for _, tc := range []struct {
		auth    string
		status  int
		message string
	}{
		{"", 401, "You didn't provide an API key."},
		{"Basic " + key, 401, "You didn't provide an API key."},
		{"Bearer sk-proj-wrongwrongwrongxyz9", 401, "Incorrect API key provided: sk-proj****************xyz9."},
		{"Bearer " + key, 200, ""},
	} {
		resp := post(t, s, "/embeddings", tc.auth, `{"model":"m","input":["a b"]}`)
		if resp.StatusCode != tc.status {
			t.Errorf("%q: %s", tc.auth, resp.Status)
			continue
		}
		if tc.status != 200 {
			e := decodeAs[errorBody](t, resp)
			if !strings.HasPrefix(e.Error.Message, tc.message) || e.Error.Code == nil || *e.Error.Code != "invalid_api_key" {
				t.Errorf("%q: %+v", tc.auth, e)
			}
		}
	}
}

func TestFail(t *testing.T) {
	for _, tc := range []struct {
		o       Options
		message string
		typ     string
	}{
		{Options{Fail: 429}, "Rate limit reached for m on requests per min", "requests"},
		{Options{Fail: 500}, "The server had an error", "server_error"},
		{Options{Fail: 503}, "The engine is currently overloaded", "server_error"},
		{Options{Fail: 404}, "The model `m` does not exist", "invalid_request_error"},
		{Options{Fail: 400, Message: "custom"}, "custom", "invalid_request_error"},
		// The key is checked first.
		{Options{Fail: 500, APIKey: "sk-x"}, "You didn't provide an API key", "invalid_request_error"},
	} {
		s := New(t, tc.o)
		resp := post(t, s, "/embeddings", "", `{"model":"m","input":["a"]}`)
		e := decodeAs[errorBody](t, resp)
		want := tc.o.Fail
		if tc.o.APIKey != "" {
			want = 401
		}
		if resp.StatusCode != want || !strings.HasPrefix(e.Error.Message, tc.message) || e.Error.Type != tc.typ {
			t.Errorf("%+v: %d %+v", tc.o, resp.StatusCode, e)
		}
		if r := s.Requests(); len(r) != 1 || r[0].Status != want || r[0].Model != "m" {
			t.Errorf("%+v: recorded %+v", tc.o, r)
		}
	}
}

func TestDelay(t *testing.T) {
	s := New(t, Options{Delay: 150 * time.Millisecond})
	start := time.Now()
	resp := post(t, s, "/embeddings", "", `{"model":"m","input":["a"]}`)
	if d := time.Since(start); resp.StatusCode != 200 || d < 150*time.Millisecond {
		t.Errorf("%s after %s", resp.Status, d)
	}
}

func TestUsageTokens(t *testing.T) {
	if tokens("") != 0 || tokens("abcd") != 1 || tokens("abcde") != 2 {
		t.Error("tokens")
	}
	if got := masked("sk-1234567890abcd"); got != "sk-1234******abcd" {
		t.Errorf("masked %q", got)
	}
	if got := masked("short"); got != "*****" {
		t.Errorf("masked %q", got)
	}
}
