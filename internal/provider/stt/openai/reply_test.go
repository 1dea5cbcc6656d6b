package openai

import (
	"errors"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/provider/apierr"
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
		text, err := parseTranscript([]byte(tc.body), key)
		if text != tc.text || (err == nil) != tc.ok {
			t.Errorf("%s: %q, %v", tc.body, text, err)
		}
	}
	// An answer that quotes the key: replaced whole, or, a key too short
	// to be told from the answer's own letters, the answer is not quoted.
	if _, err := parseTranscript([]byte(`{"txt":"`+key+`"}`), key); err == nil || err.Error() != `the answer has no text: {"txt":"[redacted]"}` {
		t.Errorf("long key: %v", err)
	}
	if _, err := parseTranscript([]byte(`{"txt":"k1"}`), "k1"); err == nil || err.Error() != "the answer has no text" {
		t.Errorf("short key: %v", err)
	}
}

func TestStatusErrorLanguage(t *testing.T) {
	// By param alone, and by message alone; not for other statuses.
	if err := statusError(400, apierr.Error{Message: "Invalid value", Param: "language"}, ""); !errors.Is(err, stt.ErrLanguage) {
		t.Errorf("param language: %v", err)
	}
	if err := statusError(422, apierr.Error{Message: "unsupported LANGUAGE"}, ""); !errors.Is(err, stt.ErrLanguage) {
		t.Errorf("422 message: %v", err)
	}
	if err := statusError(500, apierr.Error{Message: "language model crashed"}, ""); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("500 about language: %v", err)
	}
}

// FuzzParseTranscript: any body gives trimmed text or an error, without
// panicking.
func FuzzParseTranscript(f *testing.F) {
	for _, s := range []string{`{"text":" a "}`, `{"text":null}`, `{"text":1}`, `[]`, `"x"`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		text, err := parseTranscript(body, key)
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
