package openai

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/provider/stt"
)

func TestParseTranscript(t *testing.T) {
	for _, tc := range []struct {
		body, text string
		ok         bool
	}{
		{`{"text":" Hello. "}`, "Hello.", true},
		{`{"text":"","usage":{"type":"duration","seconds":2}}`, "", true},
		{`{"task":"transcribe","language":"english","text":"Hi","segments":[]}`, "Hi", true},
		{`{"text":null}`, "", false},
		{`{"txt":"Hi"}`, "", false},
		{`Hi`, "", false},
		{``, "", false},
	} {
		text, err := parseTranscript([]byte(tc.body))
		if text != tc.text || (err == nil) != tc.ok {
			t.Errorf("%s: %q, %v", tc.body, text, err)
		}
	}
}

func TestParseError(t *testing.T) {
	for _, tc := range []struct {
		body string
		want apiError
	}{
		{`{"error":{"message":"Invalid language 'xx'.","type":"invalid_request_error","param":"language","code":"invalid_language_format"}}`,
			apiError{"Invalid language 'xx'.", "language"}},
		{`{"error":{"message":"boom","param":null}}`, apiError{Message: "boom"}},
		{`{"error":"model not loaded"}`, apiError{Message: "model not loaded"}},
		{`{"message":"Not Found"}`, apiError{Message: "Not Found"}},
		{`{"detail":"Model 'x' is not installed"}`, apiError{Message: "Model 'x' is not installed"}},
		{`{"detail":[{"loc":["body","language"],"msg":"Input should be 'en' or 'de'","type":"enum"}]}`,
			apiError{"language: Input should be 'en' or 'de'", "language"}},
		{`{"detail":[{"msg":"bad"}]}`, apiError{Message: "bad"}},
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

func TestStatusErrorLanguage(t *testing.T) {
	// By param alone, and by message alone; not for other statuses.
	if err := statusError(400, apiError{Message: "Invalid value", Param: "language"}, ""); !errors.Is(err, stt.ErrLanguage) {
		t.Errorf("param language: %v", err)
	}
	if err := statusError(422, apiError{Message: "unsupported LANGUAGE"}, ""); !errors.Is(err, stt.ErrLanguage) {
		t.Errorf("422 message: %v", err)
	}
	if err := statusError(500, apiError{Message: "language model crashed"}, ""); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("500 about language: %v", err)
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
		`{"error":{"message":"m","param":"language"}}`, `{"error":"e"}`, `{"message":"m"}`,
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

// FuzzParseTranscript: any body gives trimmed text or an error, without
// panicking.
func FuzzParseTranscript(f *testing.F) {
	for _, s := range []string{`{"text":" a "}`, `{"text":null}`, `{"text":1}`, `[]`, `"x"`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		text, err := parseTranscript(body)
		if err != nil && text != "" {
			t.Errorf("text %q with error %v", text, err)
		}
		if text != strings.TrimSpace(text) {
			t.Errorf("untrimmed %q", text)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
	})
}
