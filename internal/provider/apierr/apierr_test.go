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
	// Whole, so that Redact finds a key before the message is shortened.
	long := Parse([]byte(strings.Repeat("é", 300) + "\xff"))
	if long.Message != strings.Repeat("é", 300) {
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

// FuzzParse: any body gives a valid-UTF-8 message without panicking, and
// Redact makes it a bounded one in which the key never survives.
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
		if !utf8.ValidString(e.Message) || strings.ContainsAny(e.Message, "\n\t") {
			t.Errorf("message %q", e.Message)
		}
		msg, _ := Redact(e.Message, "sk-secret")
		if len(msg) > 203 || strings.Contains(msg, "sk-secret") || keyLike.MatchString(msg) {
			t.Errorf("key in %q", msg)
		}
	})
}

func TestBrokeOff(t *testing.T) {
	unavailable := errors.New("unavailable")
	netErr := &url.Error{Op: "Post", URL: "https://secret.example/v1", Err: errors.New("connection refused")}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := BrokeOff(cancelled, context.Background(), netErr, "openai tts", unavailable, "", true); !errors.Is(err, context.Canceled) ||
		err.Error() != "openai tts: context canceled" {
		t.Errorf("the caller's cancel: %v", err)
	}
	timedOut := fmt.Errorf("%w: no answer within 1s", unavailable)
	run, stop := context.WithCancelCause(context.Background())
	stop(timedOut)
	if err := BrokeOff(context.Background(), run, netErr, "x", unavailable, "", true); err != timedOut {
		t.Errorf("the client's timeout: %v", err)
	}
	err := BrokeOff(context.Background(), context.Background(), netErr, "x", unavailable, "", true)
	if !errors.Is(err, unavailable) || err.Error() != "unavailable: connection refused" {
		t.Errorf("the network: %v (the URL must not show)", err)
	}
	// A broken answer that quotes a short key: a fixed wording; before
	// the request went out, the network's text whatever the key.
	broken := &url.Error{Op: "Post", URL: "https://x/v1", Err: errors.New(`malformed HTTP response "k1 k1"`)}
	err = BrokeOff(context.Background(), context.Background(), broken, "x", unavailable, "k1", true)
	if !errors.Is(err, unavailable) || err.Error() != "unavailable: the answer broke off or could not be read" {
		t.Errorf("a broken answer, short key: %v", err)
	}
	if err := BrokeOff(context.Background(), context.Background(), netErr, "x", unavailable, "k1", false); err.Error() != "unavailable: connection refused" {
		t.Errorf("not sent, short key: %v", err)
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
		{400, Error{Message: "bad voice key-0123456789"}, "400 Bad Request: bad voice [redacted]"},
		{599, Error{}, "599"},
	} {
		if got := Describe(tc.status, tc.e, "key-0123456789"); got != tc.want {
			t.Errorf("Describe(%d, %+v) = %q, want %q", tc.status, tc.e, got, tc.want)
		}
	}
	// A key too short to cut out: the status alone, not a letter of the
	// server's text.
	for _, tc := range []struct {
		status int
		e      Error
		want   string
	}{
		{401, Error{Message: "Incorrect API key provided: k-1"}, "401 Unauthorized: key refused"},
		{400, Error{Message: "unknown voice"}, "400 Bad Request"},
	} {
		if got := Describe(tc.status, tc.e, "k-1"); got != tc.want {
			t.Errorf("short key: Describe(%d, %+v) = %q, want %q", tc.status, tc.e, got, tc.want)
		}
	}
}
