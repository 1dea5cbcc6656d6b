package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/parley-voice/parley/internal/provider/tts"
)

// apiError is what an error answer says.
type apiError struct {
	Message string // the server's message ("" when none was found)
	Param   string // the request field it is about, when the server says
}

// parseError reads an error answer: OpenAI's
// {"error":{"message","param",...}}, {"error":"..."}, {"message":...},
// FastAPI's {"detail":"..."} or {"detail":[{"loc":[...],"msg":...}]}
// (speaches), or else the text itself, shortened.
func parseError(body []byte) apiError {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Message string `json:"message"`
			Param   string `json:"param"`
		}
		var s string
		var details []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		}
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			return apiError{Message: shorten(obj.Message), Param: obj.Param}
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return apiError{Message: shorten(s)}
		case v.Message != "":
			return apiError{Message: shorten(v.Message)}
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return apiError{Message: shorten(s)}
		case json.Unmarshal(v.Detail, &details) == nil && len(details) > 0:
			var e apiError
			var msgs []string
			for _, d := range details {
				field := ""
				if n := len(d.Loc); n > 0 {
					field = fmt.Sprint(d.Loc[n-1])
				}
				if e.Param == "" {
					e.Param = field
				}
				msgs = append(msgs, strings.TrimPrefix(field+": "+d.Msg, ": "))
			}
			e.Message = shorten(strings.Join(msgs, "; "))
			return e
		}
	}
	return apiError{Message: shorten(string(body))}
}

// shorten makes s one line of valid UTF-8 of at most 203 bytes.
func shorten(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}

// statusError is the error of an HTTP error answer. key is scrubbed from
// the server's message.
func statusError(status int, e apiError, key string) error {
	kind := tts.ErrUnavailable
	note := ""
	msg := strings.ToLower(e.Message)
	refused := status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusUnprocessableEntity
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		note = "key refused"
	case refused && (e.Param == "voice" || strings.Contains(msg, "voice")):
		kind = tts.ErrUnknownVoice
	case refused && (e.Param == "input" || strings.Contains(msg, "input")) &&
		(strings.Contains(msg, "long") || strings.Contains(msg, "at most") || strings.Contains(msg, "maximum")):
		kind = tts.ErrTextTooLong
	}
	text := fmt.Sprintf("%d %s", status, http.StatusText(status))
	for _, s := range []string{note, redact(e.Message, key)} {
		if s != "" {
			text += ": " + s
		}
	}
	return fmt.Errorf("%w: %s", kind, text)
}

// redacted stands in for a key in an error message.
const redacted = "[redacted]"

// keyLike finds an OpenAI-style key in a word: "sk-" not inside another
// word ("sk-proj-...", "'sk-...", "key:sk-..."; not "task-based").
var keyLike = regexp.MustCompile(`(^|[^A-Za-z0-9])sk-`)

// redact removes key from msg, and any word that looks like an API key
// (OpenAI's 401 message quotes the start of the key it got).
func redact(msg, key string) string {
	if key != "" {
		msg = strings.ReplaceAll(msg, key, redacted)
	}
	words := strings.Fields(msg)
	for i, w := range words {
		if keyLike.MatchString(w) {
			words[i] = redacted
		}
	}
	return strings.Join(words, " ")
}
