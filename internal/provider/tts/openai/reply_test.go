package openai

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/provider/tts"
)

func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want apiError
	}{
		{`{"error":{"message":"Invalid value: 'bob'.","type":"invalid_request_error","param":"voice","code":"invalid_value"}}`,
			apiError{"Invalid value: 'bob'.", "voice"}},
		{`{"error":{"message":"boom","param":null}}`, apiError{Message: "boom"}},
		{`{"error":"model not loaded"}`, apiError{Message: "model not loaded"}},
		{`{"message":"Not Found"}`, apiError{Message: "Not Found"}},
		{`{"detail":"Voice 'x' not found"}`, apiError{Message: "Voice 'x' not found"}},
		{`{"detail":[{"loc":["body","voice"],"msg":"Input should be 'af_heart'","type":"enum"}]}`,
			apiError{"voice: Input should be 'af_heart'", "voice"}},
		{`{"detail":[{"loc":["body",3],"msg":"a"},{"loc":[],"msg":"b"}]}`, apiError{"3: a; b", "3"}},
		{"<html>\n<h1>502 Bad   Gateway</h1>\n</html>", apiError{Message: "<html> <h1>502 Bad Gateway</h1> </html>"}},
		{"", apiError{}},
	} {
		if got := parseError([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
	long := parseError([]byte(strings.Repeat("é", 300)))
	if len(long.Message) != 203 || !utf8.ValidString(long.Message) {
		t.Errorf("long body: %d bytes %q", len(long.Message), long.Message)
	}
}

func TestStatusErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		status int
		e      apiError
		kind   error
	}{
		{400, apiError{Message: "Invalid value: 'bob'.", Param: "voice"}, tts.ErrUnknownVoice},
		{422, apiError{Message: "unknown VOICE"}, tts.ErrUnknownVoice},
		{404, apiError{Message: "voice x not found"}, tts.ErrUnknownVoice},
		{500, apiError{Message: "voice engine crashed"}, tts.ErrUnavailable},
		{401, apiError{Message: "bad voice key"}, tts.ErrUnavailable},
		{400, apiError{Message: "String should have at most 4096 characters", Param: "input"}, tts.ErrTextTooLong},
		{400, apiError{Message: "input: too long"}, tts.ErrTextTooLong},
		{400, apiError{Message: "Missing required parameter: 'input'.", Param: "input"}, tts.ErrUnavailable},
		{413, apiError{Message: "input too long"}, tts.ErrUnavailable},
	} {
		if err := statusError(tc.status, tc.e, ""); !errors.Is(err, tc.kind) {
			t.Errorf("%d %+v: %v, want %v", tc.status, tc.e, err, tc.kind)
		}
	}
}

func TestRedact(t *testing.T) {
	got := redact("Incorrect API key provided: sk-proj-ab***yz. key:sk-3 'sk-4' disk-full task-based my-secret-key", "my-secret-key")
	if want := "Incorrect API key provided: [redacted] [redacted] [redacted] disk-full task-based [redacted]"; got != want {
		t.Errorf("redact: %q, want %q", got, want)
	}
}

// FuzzParseError: any body gives a bounded, valid-UTF-8 message without
// panicking, and a key in it never survives.
func FuzzParseError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"m","param":"voice"}}`, `{"error":"e"}`, `{"message":"m"}`,
		`{"detail":"d"}`, `{"detail":[{"loc":["body",1,null],"msg":"x"}]}`, `{"detail":[{"loc":[{}]}]}`,
		`{"error":{"message":"Incorrect API key provided: sk-abc***def."}}`, "<html>", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := parseError(body)
		if len(e.Message) > 203 || !utf8.ValidString(e.Message) {
			t.Errorf("message %q", e.Message)
		}
		err := statusError(401, e, "sk-secret")
		if strings.Contains(err.Error(), "sk-secret") || keyLike.MatchString(err.Error()) {
			t.Errorf("key in %q", err)
		}
	})
}
