package openai

import (
	"errors"
	"net/http"
	"testing"

	"github.com/parley-voice/parley/internal/provider/llm"
)

// The server's message is shown with the key replaced whole, or with a key
// too short to be told from its words, not at all: the status names the
// failure. OpenAI's 401 quotes the start and end of the key it got.
func TestErrorsKeepTheKeyOut(t *testing.T) {
	const long = "sk-proj-0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		key, body, want string
	}{
		{long, `{"error":{"message":"Incorrect API key provided: sk-proj-01**********cdef. You can find your API key at https://platform.openai.com/account/api-keys."}}`,
			"llm: request rejected: 401 Unauthorized: Incorrect API key provided: [redacted] You can find your API key at https://platform.openai.com/account/api-keys."},
		{long, `{"error":"the key ` + long + ` is revoked"}`, "llm: request rejected: 401 Unauthorized: the key [redacted] is revoked"},
		{"ollama", `{"error":"the key ollama is not valid for this model"}`, "llm: request rejected: 401 Unauthorized"},
		{"", `{"error":"no key given"}`, "llm: request rejected: 401 Unauthorized: no key given"},
	} {
		srv := newRawServer(t, http.StatusUnauthorized, tc.body)
		c := New(Config{BaseURL: srv + "/v1", APIKey: tc.key, Model: "m", MaxRetries: -1, HTTPClient: testHTTPClient(t)})
		_, err := c.Stream(t.Context(), hello, nil)
		if !errors.Is(err, llm.ErrRejected) || err.Error() != tc.want {
			t.Errorf("key %q: %v, want %q", tc.key, err, tc.want)
		}
	}
}
