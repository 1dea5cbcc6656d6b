package elevenlabs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// timeoutError marks the causes of the client's own timeouts.
type timeoutError struct{ what string }

func (e timeoutError) Error() string { return e.what }

// reported turns an error the server reported, in a message or a close
// frame, into one wrapping the tts error it means.
func (s *Synthesizer) reported(e apiError) error {
	return s.kindOf(e.kind+" "+e.message, s.redact(reason(e.kind, e.message)))
}

// reason words an error kind ("quota_exceeded") and message together.
func reason(kind, msg string) string {
	switch {
	case kind == "" || strings.Contains(msg, kind):
		return msg
	case msg == "":
		return kind
	}
	return kind + ": " + msg
}

// kindOf picks the tts error for what the server said (about) and words it.
func (s *Synthesizer) kindOf(about, text string) error {
	l := strings.ToLower(about)
	switch {
	case aboutKey(l):
		return fmt.Errorf("%w: elevenlabs: API key rejected: %s", tts.ErrUnavailable, text)
	case aboutMissingVoice(l):
		return fmt.Errorf("%w: elevenlabs: %s", tts.ErrUnknownVoice, text)
	}
	return fmt.Errorf("%w: elevenlabs: %s", tts.ErrUnavailable, text)
}

// aboutKey: "Invalid API key", "invalid_api_key", "Unauthorized", ...
func aboutKey(l string) bool {
	for _, w := range []string{"api key", "api_key", "apikey", "xi-api-key", "unauthorized", "authenticat"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// aboutMissingVoice: "voice_not_found", "A voice for the voice_id ... was
// not found.", "voice_does_not_exist", ...
func aboutMissingVoice(l string) bool {
	if !strings.Contains(l, "voice") {
		return false
	}
	for _, w := range []string{"not found", "not_found", "does not exist", "does_not_exist", "doesn't exist"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// closed explains a close frame that came before isFinal.
func (s *Synthesizer) closed(ce websocket.CloseError) error {
	if ce.Reason == "" {
		return fmt.Errorf("%w: elevenlabs: the server closed the socket before the end (%d)", tts.ErrUnavailable, ce.Code)
	}
	return s.kindOf(ce.Reason, fmt.Sprintf("closed %d: %s", ce.Code, s.redact(ce.Reason)))
}

// handshake explains a handshake answered with an HTTP error.
func (s *Synthesizer) handshake(resp *http.Response) error {
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
	}
	kind, msg := bodyMessage(body)
	text := fmt.Sprintf("handshake answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if r := reason(kind, msg); r != "" {
		text += ": " + r
	}
	text = s.redact(text)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%w: elevenlabs: API key rejected: %s", tts.ErrUnavailable, text)
	}
	return s.kindOf(kind+" "+msg, text)
}

// bodyMessage finds the reason in an HTTP error body: the API's
// {"detail":{"status":...,"message":...}}, {"detail":"..."},
// {"message":...}, or the text itself, shortened.
func bodyMessage(body []byte) (kind, msg string) {
	var v struct {
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil {
		var d struct{ Status, Message string }
		var s string
		switch {
		case json.Unmarshal(v.Detail, &d) == nil && (d.Status != "" || d.Message != ""):
			return d.Status, d.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return "", s
		case v.Message != "" || len(v.Error) > 0:
			return scalar(v.Error), v.Message
		}
	}
	return "", apierr.Shorten(string(body))
}

// unreachable explains a dial that got no HTTP answer.
func (s *Synthesizer) unreachable(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		// The URL is known to the caller; say what failed, not where.
		err = ue.Err
	}
	return fmt.Errorf("%w: elevenlabs: cannot connect: %s", tts.ErrUnavailable, s.redact(err.Error()))
}

// redact keeps the API key out of text from the network, in case a server
// or proxy echoes it.
func (s *Synthesizer) redact(text string) string {
	if len(s.key) < 4 {
		return text
	}
	return strings.ReplaceAll(text, s.key, "[API key]")
}
