package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Error
	}{
		{`{"error":{"message":"Invalid language 'xx'.","type":"invalid_request_error","param":"language","code":"invalid_language_format"}}`,
			Error{"Invalid language 'xx'.", "language"}},
		{`{"error":{"message":"Invalid value: 'bob'.","type":"invalid_request_error","param":"voice","code":"invalid_value"}}`,
			Error{"Invalid value: 'bob'.", "voice"}},
		{`{"error":{"message":"boom","param":null}}`, Error{Message: "boom"}},
		{`{"error":"model not loaded"}`, Error{Message: "model not loaded"}},
		{`{"message":"Not Found"}`, Error{Message: "Not Found"}},
		{`{"detail":"Model 'x' is not installed"}`, Error{Message: "Model 'x' is not installed"}},
		{`{"detail":"Voice 'x' not found"}`, Error{Message: "Voice 'x' not found"}},
		{`{"detail":[{"loc":["body","language"],"msg":"Input should be 'en' or 'de'","type":"enum"}]}`,
			Error{"language: Input should be 'en' or 'de'", "language"}},
		{`{"detail":[{"loc":["body","voice"],"msg":"Input should be 'af_heart'","type":"enum"}]}`,
			Error{"voice: Input should be 'af_heart'", "voice"}},
		{`{"detail":[{"msg":"bad"}]}`, Error{Message: "bad"}},
		{`{"detail":[{"loc":["body",3],"msg":"a"},{"loc":[],"msg":"b"}]}`, Error{"3: a; b", "3"}},
		{"<html>\n<h1>502 Bad   Gateway</h1>\n</html>", Error{Message: "<html> <h1>502 Bad Gateway</h1> </html>"}},
		{"", Error{}},
	} {
		if got := Parse([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.body, got, tc.want)
		}
	}
	long := Parse([]byte(strings.Repeat("é", 300)))
	if len(long.Message) != 203 || !utf8.ValidString(long.Message) {
		t.Errorf("long body: %d bytes %q", len(long.Message), long.Message)
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{" a\n\tb  c ", "a b c"},
		{"a\xffb", "ab"},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{strings.Repeat("x", 201), strings.Repeat("x", 200) + "..."},
	} {
		if got := Shorten(tc.in); got != tc.want {
			t.Errorf("Shorten(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	got := Redact("Incorrect API key provided: sk-proj-ab***yz. key:sk-3 'sk-4' disk-full task-based my-secret-key", "my-secret-key")
	if want := "Incorrect API key provided: [redacted] [redacted] [redacted] disk-full task-based [redacted]"; got != want {
		t.Errorf("redact: %q, want %q", got, want)
	}
}

// FuzzParse: any body gives a bounded, valid-UTF-8 message without
// panicking, and a key in it never survives Redact.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"m","param":"language"}}`, `{"error":{"message":"m","param":"voice"}}`,
		`{"error":"e"}`, `{"message":"m"}`,
		`{"detail":"d"}`, `{"detail":[{"loc":["body",1,null],"msg":"x"}]}`, `{"detail":[{"loc":[{}]}]}`,
		`{"error":{"message":"Incorrect API key provided: sk-abc***def."}}`, "<html>", "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := Parse(body)
		if len(e.Message) > 203 || !utf8.ValidString(e.Message) {
			t.Errorf("message %q", e.Message)
		}
		msg := Redact(e.Message, "sk-secret")
		if strings.Contains(msg, "sk-secret") || keyLike.MatchString(msg) {
			t.Errorf("key in %q", msg)
		}
	})
}

func TestBrokeOff(t *testing.T) {
	unavailable := errors.New("unavailable")
	netErr := &url.Error{Op: "Post", URL: "https://secret.example/v1", Err: errors.New("connection refused")}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := BrokeOff(cancelled, context.Background(), netErr, "openai tts", unavailable); !errors.Is(err, context.Canceled) ||
		err.Error() != "openai tts: context canceled" {
		t.Errorf("the caller's cancel: %v", err)
	}
	timedOut := fmt.Errorf("%w: no answer within 1s", unavailable)
	run, stop := context.WithCancelCause(context.Background())
	stop(timedOut)
	if err := BrokeOff(context.Background(), run, netErr, "x", unavailable); err != timedOut {
		t.Errorf("the client's timeout: %v", err)
	}
	err := BrokeOff(context.Background(), context.Background(), netErr, "x", unavailable)
	if !errors.Is(err, unavailable) || err.Error() != "unavailable: connection refused" {
		t.Errorf("the network: %v (the URL must not show)", err)
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		status int
		e      Error
		want   string
	}{
		{401, Error{Message: "Incorrect API key provided: sk-abc123."}, "401 Unauthorized: key refused: Incorrect API key provided: [redacted]"},
		{403, Error{}, "403 Forbidden: key refused"},
		{400, Error{Message: "bad voice k-1"}, "400 Bad Request: bad voice [redacted]"},
		{599, Error{}, "599"},
	} {
		if got := Describe(tc.status, tc.e, "k-1"); got != tc.want {
			t.Errorf("Describe(%d, %+v) = %q, want %q", tc.status, tc.e, got, tc.want)
		}
	}
}
