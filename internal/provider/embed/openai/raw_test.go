package openai

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parley-voice/parley/internal/provider/embed"
)

// newRawServer answers the n-th request (from 1) with status and the body
// answer(n) gives, for answers the fake does not give. It returns the
// server's URL.
func newRawServer(t *testing.T, status int, answer func(n int) string) string {
	t.Helper()
	var count atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer(int(count.Add(1))))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func rawEmbedder(t *testing.T, url string, change ...func(*Config)) *Embedder {
	t.Helper()
	c := Config{BaseURL: url, HTTPClient: testHTTPClient(t)}
	for _, f := range change {
		f(&c)
	}
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestBadAnswers: answers that break the protocol are ErrUnavailable,
// through the whole client.
func TestBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"html", "<html>login</html>", "not JSON: <html>login</html>"},
		{"too few", `{"data":[{"index":0,"embedding":[1,2]}]}`, "1 embeddings for 2 texts"},
		{"lengths differ", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`, "embedding 1 has 1 dimensions, want 2"},
		{"same index", `{"data":[{"index":1,"embedding":[1]},{"index":1,"embedding":[2]}]}`, "two embeddings have index 1"},
		{"base64", `{"data":[{"index":0,"embedding":"AACAPw=="},{"index":1,"embedding":"AACAPw=="}]}`, "is a string (base64?)"},
	} {
		e := rawEmbedder(t, newRawServer(t, http.StatusOK, func(int) string { return tc.body }))
		_, err := embedTexts(t, e, []string{"a", "b"})
		if !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrUnavailable containing %q", tc.name, err, tc.want)
		}
	}
}

// TestLengthAcrossBatches: a later batch must have the length of the
// first.
func TestLengthAcrossBatches(t *testing.T) {
	url := newRawServer(t, http.StatusOK, func(n int) string {
		if n == 1 {
			return `{"data":[{"index":0,"embedding":[1,2,3]}]}`
		}
		return `{"data":[{"index":0,"embedding":[1,2]}]}`
	})
	e := rawEmbedder(t, url, func(c *Config) { c.BatchSize = 1 })
	_, err := embedTexts(t, e, []string{"a", "b"})
	if !errors.Is(err, embed.ErrUnavailable) || err.Error() != "embed: provider unavailable: embedding 0 has 2 dimensions, want 3 (texts 1-1 of 2)" {
		t.Errorf("err = %v", err)
	}
}

// TestHugeAnswer: an answer far over what the texts could need is cut off.
func TestHugeAnswer(t *testing.T) {
	huge := `{"data":[{"index":0,"embedding":[` + strings.Repeat("0.5,", 1<<20) + `0.5]}]}`
	e := rawEmbedder(t, newRawServer(t, http.StatusOK, func(int) string { return huge }))
	_, err := embedTexts(t, e, []string{"a"})
	if want := fmt.Sprintf("an answer over %d bytes for 1 texts", 2*maxReplyPerText); !errors.Is(err, embed.ErrUnavailable) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v", err)
	}
}

// TestErrorBodies: error answers of servers other than OpenAI keep their
// message.
func TestErrorBodies(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body, want string
		kind       error
	}{
		{400, `{"error":"model \"nomic\" not found, try pulling it first"}`, `400 Bad Request: model "nomic" not found`, embed.ErrRejected},
		{422, `{"detail":[{"loc":["body","input"],"msg":"Field required"}]}`, "422 Unprocessable Entity: input: Field required", embed.ErrRejected},
		{502, "<html>\n<h1>502 Bad Gateway</h1>\n</html>", "502 Bad Gateway: <html> <h1>502 Bad Gateway</h1> </html>", embed.ErrUnavailable},
	} {
		e := rawEmbedder(t, newRawServer(t, tc.status, func(int) string { return tc.body }))
		_, err := embedTexts(t, e, []string{"a"})
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d: err = %v, want %v containing %q", tc.status, err, tc.kind, tc.want)
		}
	}
}
