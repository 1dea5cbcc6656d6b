package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/embed"
	"github.com/parley-voice/parley/internal/provider/embed/openai/openaitest"
)

// backstop bounds every Embed in these tests: a call that hangs ends with
// context.DeadlineExceeded, which no test accepts.
const backstop = 10 * time.Second

const key = "sk-test-0123456789abcdef"

// setup starts a fake with o and an Embedder for it with a short timeout;
// change applies to the config before New.
func setup(t *testing.T, o openaitest.Options, change ...func(*Config)) (*Embedder, *openaitest.Server) {
	t.Helper()
	server := openaitest.New(t, o)
	cfg := Config{
		BaseURL:    server.URL,
		APIKey:     key,
		Model:      "embed-test",
		Timeout:    time.Second,
		HTTPClient: testHTTPClient(t),
	}
	for _, f := range change {
		f(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, server
}

// testHTTPClient has a transport of its own whose idle connections are
// closed when the test ends, so no keep-alive goroutine outlives it.
func testHTTPClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// embedTexts runs one Embed under the backstop.
func embedTexts(t *testing.T, e *Embedder, texts []string) ([][]float32, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backstop)
	defer cancel()
	vecs, err := e.Embed(ctx, texts)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Embed still running after %s", backstop)
	}
	if err != nil && vecs != nil {
		t.Errorf("%d vectors with the error %v", len(vecs), err)
	}
	return vecs, err
}

// want is the fake's vectors of texts.
func want(texts []string, dim int) [][]float32 {
	var vecs [][]float32
	for _, s := range texts {
		vecs = append(vecs, openaitest.Vector(s, dim))
	}
	return vecs
}

// numbered is n distinct texts.
func numbered(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk number %d about topic%c%c", i, 'a'+i%26, 'a'+i/26%26)
	}
	return texts
}

func TestEmbedRequest(t *testing.T) {
	e, server := setup(t, openaitest.Options{APIKey: key})
	texts := []string{"Opening hours are nine to five.", "We take bookings by phone.", "Parking is free after six."}
	vecs, err := embedTexts(t, e, texts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want(texts, openaitest.DefaultDim), vecs); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	reqs := server.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.Path != "/v1/embeddings" {
		t.Errorf("%s %s", got.Method, got.Path)
	}
	if got.Auth != "Bearer "+key {
		t.Errorf("Authorization = %q", got.Auth)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !slices.Equal(got.Keys, []string{"encoding_format", "input", "model"}) {
		t.Errorf("body keys %q, want no dimensions", got.Keys)
	}
	if got.Model != "embed-test" || got.EncodingFormat != "float" || !slices.Equal(got.Input, texts) {
		t.Errorf("model %q, encoding_format %q, input %q", got.Model, got.EncodingFormat, got.Input)
	}
}

func TestDimensions(t *testing.T) {
	e, server := setup(t, openaitest.Options{}, func(c *Config) { c.Dimensions = 64 })
	texts := []string{"short vectors", "for a small index"}
	vecs, err := embedTexts(t, e, texts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want(texts, 64), vecs); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	got := server.Requests()[0]
	if !slices.Equal(got.Keys, []string{"dimensions", "encoding_format", "input", "model"}) || got.Dimensions != 64 {
		t.Errorf("body keys %q, dimensions %d", got.Keys, got.Dimensions)
	}
}

// TestBatching: texts go in batches of BatchSize, in order, and the
// vectors come back in the order of the texts though the server lists
// them shuffled.
func TestBatching(t *testing.T) {
	e, server := setup(t, openaitest.Options{Shuffle: true}, func(c *Config) { c.BatchSize = 100 })
	texts := numbered(250)
	vecs, err := embedTexts(t, e, texts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want(texts, openaitest.DefaultDim), vecs); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	reqs := server.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if lo, hi := 100*i, min(100*i+100, 250); !slices.Equal(r.Input, texts[lo:hi]) {
			t.Errorf("request %d: %d texts, want texts %d-%d", i, len(r.Input), lo, hi-1)
		}
	}
}

func TestBatchSize(t *testing.T) {
	e, server := setup(t, openaitest.Options{})
	if _, err := embedTexts(t, e, numbered(DefaultBatchSize+1)); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, r := range server.Requests() {
		sizes = append(sizes, len(r.Input))
	}
	if !slices.Equal(sizes, []int{DefaultBatchSize, 1}) {
		t.Errorf("batches of %v texts", sizes)
	}
	big, _ := setup(t, openaitest.Options{}, func(c *Config) { c.BatchSize = 5000 })
	if big.batch != MaxBatchSize {
		t.Errorf("BatchSize 5000: batches of %d", big.batch)
	}
}

// TestSimilarity: through the client, the fake's vectors rank texts by the
// words they share with a question.
func TestSimilarity(t *testing.T) {
	e, _ := setup(t, openaitest.Options{})
	texts := []string{
		"Can I book a table for dinner?",
		"Parking is free after six in the garage.",
		"Table bookings for dinner are taken until 9 pm.",
		"Our menu changes with the seasons.",
	}
	vecs, err := embedTexts(t, e, texts)
	if err != nil {
		t.Fatal(err)
	}
	best, bestScore := 0, -1.0
	for i := 1; i < len(vecs); i++ {
		if s := openaitest.Cosine(vecs[0], vecs[i]); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best != 2 || bestScore < 0.5 {
		t.Errorf("closest to the question: %q (cosine %.2f), want %q", texts[best], bestScore, texts[2])
	}
}

func TestEmptyInput(t *testing.T) {
	e, server := setup(t, openaitest.Options{})
	for _, texts := range [][]string{nil, {}} {
		vecs, err := embedTexts(t, e, texts)
		if vecs != nil || err != nil {
			t.Errorf("%q: %v, %v", texts, vecs, err)
		}
	}
	if n := len(server.Requests()); n != 0 {
		t.Errorf("server got %d requests, want none", n)
	}
}

func TestDimensionIgnored(t *testing.T) {
	// A server that does not know "dimensions" answers with its own length.
	e, _ := setup(t, openaitest.Options{IgnoreDimensions: true}, func(c *Config) { c.Dimensions = 64 })
	_, err := embedTexts(t, e, []string{"a text", "another text"})
	if !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), "has 256 dimensions, want 64") {
		t.Errorf("err = %v, want ErrUnavailable for the length", err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		status  int
		message string
		kind    error
		want    string
	}{
		{401, "Incorrect API key provided: " + key[:7] + "*************cdef. You can find your API key at https://platform.openai.com/account/api-keys.", embed.ErrUnavailable, "401 Unauthorized: key refused: Incorrect API key provided: [redacted]"},
		{403, "key " + key + " is not allowed", embed.ErrUnavailable, "403 Forbidden: key refused: key [redacted] is not allowed"},
		{408, "", embed.ErrUnavailable, "408 Request Timeout"},
		{429, "", embed.ErrUnavailable, "429 Too Many Requests: Rate limit reached for embed-test"},
		{500, "", embed.ErrUnavailable, "500 Internal Server Error: The server had an error"},
		{502, "", embed.ErrUnavailable, "502 Bad Gateway"},
		{503, "", embed.ErrUnavailable, "503 Service Unavailable: The engine is currently overloaded"},
		{400, "This model does not support specifying dimensions.", embed.ErrRejected, "400 Bad Request: This model does not support specifying dimensions."},
		{404, "", embed.ErrRejected, "404 Not Found: The model `embed-test` does not exist"},
		{413, "", embed.ErrRejected, "413 Request Entity Too Large"},
		{422, "input too long", embed.ErrRejected, "422 Unprocessable Entity: input too long"},
	} {
		e, _ := setup(t, openaitest.Options{Fail: tc.status, Message: tc.message})
		_, err := embedTexts(t, e, []string{"hello"})
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d: err = %v, want %v containing %q", tc.status, err, tc.kind, tc.want)
			continue
		}
		for _, other := range []error{embed.ErrUnavailable, embed.ErrRejected} {
			if other != tc.kind && errors.Is(err, other) {
				t.Errorf("%d: err = %v is also %v", tc.status, err, other)
			}
		}
		if strings.Contains(err.Error(), key[:7]) {
			t.Errorf("%d: the key shows in %q", tc.status, err)
		}
	}
}

// TestRefusedTexts: what the server refuses of the texts themselves is
// ErrRejected with its message; in a later batch, the error says which
// texts, and no further batch is sent.
func TestRefusedTexts(t *testing.T) {
	e, server := setup(t, openaitest.Options{MaxTokens: 20}, func(c *Config) { c.BatchSize = 100 })
	_, err := embedTexts(t, e, []string{"fine", strings.Repeat("long ", 20)})
	if !errors.Is(err, embed.ErrRejected) || !strings.Contains(err.Error(), "400 Bad Request: This model's maximum context length is 20 tokens") ||
		strings.Contains(err.Error(), "texts") {
		t.Errorf("too long: err = %v", err)
	}
	_, err = embedTexts(t, e, []string{"fine", ""})
	if !errors.Is(err, embed.ErrRejected) || !strings.Contains(err.Error(), "'$.input' is invalid") {
		t.Errorf("empty: err = %v", err)
	}

	texts := numbered(350)
	texts[150] = ""
	before := len(server.Requests())
	_, err = embedTexts(t, e, texts)
	if !errors.Is(err, embed.ErrRejected) || !strings.HasSuffix(err.Error(), "(texts 100-199 of 350)") {
		t.Errorf("second batch: err = %v", err)
	}
	if n := len(server.Requests()) - before; n != 2 {
		t.Errorf("%d requests, want 2 (none after the refused one)", n)
	}
}

func TestWrongKey(t *testing.T) {
	e, _ := setup(t, openaitest.Options{APIKey: "sk-the-right-one-000000"})
	_, err := embedTexts(t, e, []string{"hello"})
	if !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), "401 Unauthorized: key refused: Incorrect API key provided: [redacted]") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), key[:7]) || strings.Contains(err.Error(), key[len(key)-4:]) {
		t.Errorf("the key shows in %q", err)
	}
	// No key at all.
	e, _ = setup(t, openaitest.Options{APIKey: key}, func(c *Config) { c.APIKey = "" })
	_, err = embedTexts(t, e, []string{"hello"})
	if !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), "You didn't provide an API key") {
		t.Errorf("no key: err = %v", err)
	}
}

// TestKeyNeverShown: a key of any shape is scrubbed from the server's
// message.
func TestKeyNeverShown(t *testing.T) {
	const local = "local-secret-42"
	for _, status := range []int{400, 401, 500} {
		e, _ := setup(t, openaitest.Options{Fail: status, Message: "key '" + local + "' unknown"}, func(c *Config) { c.APIKey = local })
		_, err := embedTexts(t, e, []string{"hello"})
		if err == nil || strings.Contains(err.Error(), local) || !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("%d: err = %v", status, err)
		}
	}
}

// TestNoEnvironment: OPENAI_* variables change nothing; what is not
// configured is not sent.
func TestNoEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	e, server := setup(t, openaitest.Options{}, func(c *Config) { c.APIKey = "" })
	if _, err := embedTexts(t, e, []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	if auth, ok := server.Requests()[0].Header["Authorization"]; ok {
		t.Errorf("Authorization %q sent without a configured key", auth)
	}
}

func TestTimeout(t *testing.T) {
	e, _ := setup(t, openaitest.Options{Delay: time.Second}, func(c *Config) { c.Timeout = 100 * time.Millisecond })
	start := time.Now()
	_, err := embedTexts(t, e, []string{"hello"})
	if !errors.Is(err, embed.ErrUnavailable) || err.Error() != "embed: provider unavailable: no answer within 100ms" {
		t.Errorf("err = %v, want the timeout", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("returned after %s", d)
	}
}

// TestTimeoutPerRequest: Timeout bounds each request, not the whole Embed.
func TestTimeoutPerRequest(t *testing.T) {
	e, server := setup(t, openaitest.Options{Delay: 100 * time.Millisecond}, func(c *Config) {
		c.Timeout = 250 * time.Millisecond
		c.BatchSize = 1
	})
	if _, err := embedTexts(t, e, numbered(4)); err != nil {
		t.Fatal(err)
	}
	if n := len(server.Requests()); n != 4 {
		t.Errorf("%d requests, want 4", n)
	}
}

func TestCancel(t *testing.T) {
	e, server := setup(t, openaitest.Options{Delay: backstop}, func(c *Config) { c.Timeout = backstop })
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	vecs, err := e.Embed(ctx, []string{"hello"})
	if vecs != nil || !errors.Is(err, context.Canceled) || errors.Is(err, embed.ErrUnavailable) || errors.Is(err, embed.ErrRejected) {
		t.Errorf("%v, %v; want context.Canceled and no kind", vecs, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned %s after the cancel", d)
	}
	// Canceled before: nothing is sent.
	before := len(server.Requests())
	if _, err := e.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled before: err = %v", err)
	}
	if n := len(server.Requests()) - before; n != 0 {
		t.Errorf("canceled before: %d requests", n)
	}
}

func TestNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e, err := New(Config{BaseURL: "http://user:hunter2@" + addr + "/v1", APIKey: key, HTTPClient: testHTTPClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = embedTexts(t, e, []string{"hello"})
	if !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "/v1") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v, want ErrUnavailable: connection refused, without the URL", err)
	}
}

// TestConcurrent: one Embedder serves many goroutines (run with -race).
func TestConcurrent(t *testing.T) {
	e, _ := setup(t, openaitest.Options{Shuffle: true}, func(c *Config) { c.BatchSize = 7 })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			texts := numbered(20 + g)
			vecs, err := embedTexts(t, e, texts)
			if err != nil {
				t.Error(err)
				return
			}
			if diff := cmp.Diff(want(texts, openaitest.DefaultDim), vecs); diff != "" {
				t.Errorf("goroutine %d (-want +got):\n%s", g, diff)
			}
		})
	}
	wg.Wait()
}

func TestNew(t *testing.T) {
	for _, c := range []Config{
		{},
		{BaseURL: "api.openai.com/v1"},
		{BaseURL: "ftp://example.com/v1"},
		{BaseURL: "http://"},
		{BaseURL: "http://a b/v1"},
		{BaseURL: "https://api.openai.com/v1", Dimensions: -1},
		{BaseURL: "https://api.openai.com/v1", APIKey: "sk-abc\r\nX-Evil: 1"},
	} {
		if e, err := New(c); err == nil || e != nil {
			t.Errorf("%+v: %v, %v", c, e, err)
		}
	}
	_, err := New(Config{BaseURL: "http://user:hunter2@\x7f/v1"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v", err)
	}
}

func TestDefaults(t *testing.T) {
	e, err := New(Config{BaseURL: "https://api.openai.com/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.endpoint != "https://api.openai.com/v1/embeddings" || e.model != DefaultModel || e.batch != DefaultBatchSize ||
		e.timeout != DefaultTimeout || e.dimensions != 0 {
		t.Errorf("endpoint %q, model %q, batch %d, timeout %s, dimensions %d", e.endpoint, e.model, e.batch, e.timeout, e.dimensions)
	}
}

func TestOwnTransportClosed(t *testing.T) {
	server := openaitest.New(t, openaitest.Options{})
	e, err := New(Config{BaseURL: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if _, err := embedTexts(t, e, []string{"hello"}); err != nil {
		t.Fatal(err)
	}
}
