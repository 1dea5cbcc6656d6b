package elevenlabs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	text, ok := apierr.Redact(reason(e.kind, e.message), s.key)
	if !ok {
		text = cmp.Or(e.kind, "an error message") // its text cannot be shown
	}
	return s.kindOf(e.kind+" "+e.message, text)
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
	return s.kindOf(ce.Reason, fmt.Sprintf("closed %d%s", ce.Code, apierr.Quote(ce.Reason, s.key)))
}

// handshake explains a handshake answered with an HTTP error.
func (s *Synthesizer) handshake(resp *http.Response) error {
	var body []byte
	if resp.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
	}
	kind, msg := bodyMessage(body)
	text := fmt.Sprintf("handshake answered %d %s%s", resp.StatusCode, http.StatusText(resp.StatusCode), apierr.Quote(reason(kind, msg), s.key))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%w: elevenlabs: API key rejected: %s", tts.ErrUnavailable, text)
	}
	return s.kindOf(kind+" "+msg, text)
}

// bodyMessage finds the reason in an HTTP error body: the API's
// {"detail":{"status":...,"message":...}}, {"detail":"..."},
// {"message":...}, or the text itself, on one line.
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
	// Folded, not cut: a cut could leave part of the key where redact no
	// longer finds it; redact shortens.
	return "", strings.Join(strings.Fields(string(body)), " ")
}

// unreachable explains a dial that got no HTTP answer (sent: whether the
// handshake's headers, with the key, went out), without the URL: the
// caller knows it; say what failed, not where.
func (s *Synthesizer) unreachable(err error, sent bool) error {
	text, ok := apierr.Unanswered(err, s.key, sent)
	if !ok {
		text = "the handshake broke off"
	}
	return fmt.Errorf("%w: elevenlabs: cannot connect: %s", tts.ErrUnavailable, text)
}
