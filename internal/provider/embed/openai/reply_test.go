package openai

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/embed"
)

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		body string
		n    int
		dim  int
		want [][]float32
		err  string
	}{
		{`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[3,4]},{"object":"embedding","index":0,"embedding":[1,-2.5e-3]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`,
			2, 0, [][]float32{{1, -2.5e-3}, {3, 4}}, ""},
		{`{"data":[{"index":0,"embedding":[1,2]}]}`, 1, 2, [][]float32{{1, 2}}, ""},
		// No index: the place in the list.
		{`{"data":[{"embedding":[1]},{"embedding":[2]}]}`, 2, 0, [][]float32{{1}, {2}}, ""},
		{`{"data":[{"index":1,"embedding":[1]},{"embedding":[2]}]}`, 2, 0, nil, "two embeddings have index 1"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, 2, 0, nil, "two embeddings have index 0"},
		{`{"data":[{"index":2,"embedding":[1]},{"index":0,"embedding":[2]}]}`, 2, 0, nil, "index 2, for 2 texts"},
		{`{"data":[{"index":-1,"embedding":[1]}]}`, 1, 0, nil, "index -1"},
		{`{"data":[{"index":0,"embedding":[1]}]}`, 2, 0, nil, "1 embeddings for 2 texts"},
		{`{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1]}]}`, 1, 0, nil, "2 embeddings for 1 texts"},
		{`{"data":[]}`, 1, 0, nil, "0 embeddings for 1 texts"},
		{`{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`, 2, 0, nil, "embedding 1 has 3 dimensions, want 2"},
		{`{"data":[{"index":0,"embedding":[1,2]}]}`, 1, 3, nil, "embedding 0 has 2 dimensions, want 3"},
		{`{"data":[{"index":0,"embedding":[]}]}`, 1, 0, nil, "embedding 0 is empty"},
		{`{"data":[{"index":0,"embedding":null}]}`, 1, 0, nil, "embedding 0 is empty"},
		{`{"data":[{"index":0}]}`, 1, 0, nil, "embedding 0 is empty"},
		{`{"data":[{"index":0,"embedding":"AACAPw=="}]}`, 1, 0, nil, "embedding 0 is a string (base64?)"},
		{`{"data":[{"index":0,"embedding":[1e39]}]}`, 1, 0, nil, "embedding 0 is not a list of numbers"},
		{`{"data":[{"index":0,"embedding":["1"]}]}`, 1, 0, nil, "embedding 0 is not a list of numbers"},
		{`{"data":[{"index":0.5,"embedding":[1]}]}`, 1, 0, nil, "not a list of embeddings"},
		{`{"data":{"index":0}}`, 1, 0, nil, "not a list of embeddings"},
		{`{"data":null}`, 1, 0, nil, "has no data"},
		{`{"error":{"message":"overloaded"}}`, 1, 0, nil, `has no data: {"error":{"message":"overloaded"}}`},
		{`[]`, 1, 0, nil, "not a list of embeddings"},
		{`<html>login</html>`, 1, 0, nil, "not JSON: <html>login</html>"},
		{``, 1, 0, nil, "not JSON"},
	} {
		got, err := parseReply([]byte(tc.body), tc.n, tc.dim, key)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			} else if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.body, diff)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || got != nil {
			t.Errorf("%s: %v, %v; want an error containing %q", tc.body, got, err, tc.err)
		}
	}
}

// TestParseReplyOrder: whatever order an answer lists the items in, the
// vectors come back by index, exactly as sent.
func TestParseReplyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		n, dim := 1+rng.IntN(20), 1+rng.IntN(8)
		want := make([][]float32, n)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		items := make([]item, n)
		for i := range want {
			want[i] = make([]float32, dim)
			for j := range want[i] {
				want[i][j] = float32(rng.NormFloat64())
			}
			items[i] = item{i, want[i]}
		}
		rng.Shuffle(n, func(i, j int) { items[i], items[j] = items[j], items[i] })
		body, _ := json.Marshal(map[string]any{"data": items})
		got, err := parseReply(body, n, 0, key)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", body, diff)
		}
	}
}

func TestStatusError(t *testing.T) {
	for status, kind := range map[int]error{
		400: embed.ErrRejected, 401: embed.ErrUnavailable, 402: embed.ErrRejected, 403: embed.ErrUnavailable,
		404: embed.ErrRejected, 408: embed.ErrUnavailable, 413: embed.ErrRejected, 422: embed.ErrRejected,
		429: embed.ErrUnavailable, 499: embed.ErrRejected, 500: embed.ErrUnavailable, 502: embed.ErrUnavailable,
		503: embed.ErrUnavailable, 504: embed.ErrUnavailable, 204: embed.ErrUnavailable, 304: embed.ErrUnavailable,
	} {
		err := statusError(status, apierr.Error{Message: "m"}, "")
		if !errors.Is(err, kind) {
			t.Errorf("%d: %v, want %v", status, err, kind)
		}
		if kind == embed.ErrRejected && errors.Is(err, embed.ErrUnavailable) || kind == embed.ErrUnavailable && errors.Is(err, embed.ErrRejected) {
			t.Errorf("%d: %v is both kinds", status, err)
		}
	}
	if got := statusError(499, apierr.Error{}, "").Error(); got != "embed: request rejected: 499" {
		t.Errorf("499 without a message: %q", got)
	}
}

// FuzzParseReply: any answer gives exactly n vectors of one non-zero
// length (dim when set), or an error of bounded length and no vectors,
// without panicking.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"index":0,"embedding":[0.1,-0.2]},{"index":1,"embedding":[1,2]}]}`,
		`{"data":[{"index":1,"embedding":[1]},{"index":0,"embedding":[2]}]}`,
		`{"data":[{"embedding":[1]},{"index":0,"embedding":[2]}]}`,
		`{"data":[{"index":0,"embedding":"AACAPw=="}]}`,
		`{"data":[{"index":0,"embedding":[1e39]}]}`,
		`{"data":null}`, `{"data":[]}`, `[]`, `null`, "\xff", "<html>",
	} {
		f.Add([]byte(s), uint8(2), uint8(0))
	}
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1,2,3]}]}`), uint8(1), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, n8, dim8 uint8) {
		n, dim := 1+int(n8%16), int(dim8%8)
		vecs, err := parseReply(body, n, dim, key)
		if err != nil {
			if vecs != nil {
				t.Errorf("vectors with the error %v", err)
			}
			if len(err.Error()) > 300 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d texts", len(vecs), n)
		}
		for i, v := range vecs {
			if len(v) == 0 || len(v) != len(vecs[0]) || (dim > 0 && len(v) != dim) {
				t.Errorf("vector %d of %d numbers (first: %d, dim %d)", i, len(v), len(vecs[0]), dim)
			}
		}
	})
}
