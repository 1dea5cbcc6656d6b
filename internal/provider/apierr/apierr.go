// Package apierr owns reading error answers of HTTP provider APIs and
// keeping keys out of error text: [Parse] finds the message (and the
// request field it is about) in an error answer of OpenAI's API or of the
// servers that copy it, [Shorten] makes text from the network fit an error
// message, and [Redact] scrubs the caller's key, and anything that looks
// like an API key, from it; [Describe] words an error answer;
// [BrokeOff] explains a request that got no
// answer. What an answer means (which error kind a status and message are)
// stays with each provider.
package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Error is what an error answer says.
type Error struct {
	Message string // the server's message ("" when none was found)
	Param   string // the request field it is about, when the server says
}

// Parse reads an error answer: OpenAI's
// {"error":{"message","param",...}}, {"error":"..."}, {"message":...},
// FastAPI's {"detail":"..."} or {"detail":[{"loc":[...],"msg":...}]}
// (speaches), or else the text itself, shortened.
func Parse(body []byte) Error {
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
			return Error{Message: Shorten(obj.Message), Param: obj.Param}
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return Error{Message: Shorten(s)}
		case v.Message != "":
			return Error{Message: Shorten(v.Message)}
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return Error{Message: Shorten(s)}
		case json.Unmarshal(v.Detail, &details) == nil && len(details) > 0:
			var e Error
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
			e.Message = Shorten(strings.Join(msgs, "; "))
			return e
		}
	}
	return Error{Message: Shorten(string(body))}
}

// Shorten makes s one line of valid UTF-8 of at most 203 bytes: white
// space folded to single spaces, and anything past 200 bytes cut off and
// marked with "...".
func Shorten(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}

// redacted stands in for a key in an error message.
const redacted = "[redacted]"

// keyLike finds an OpenAI-style key in a word: "sk-" not inside another
// word ("sk-proj-...", "'sk-...", "key:sk-..."; not "task-based").
var keyLike = regexp.MustCompile(`(^|[^A-Za-z0-9])sk-`)

// Redact removes key from msg, and any word that looks like an API key
// (OpenAI's 401 message quotes the start of the key it got). White space
// in msg is folded to single spaces.
func Redact(msg, key string) string {
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

// BrokeOff explains a request that got no complete answer: the caller's
// cancel (ctx's error, after prefix), the cause the client's own run
// context was ended with when it is of kind unavailable (a timeout the
// client set), or else the network, as unavailable. The request URL, the
// configured endpoint, is left out: it says what failed, not where.
func BrokeOff(ctx, run context.Context, err error, prefix string, unavailable error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", prefix, ctx.Err())
	}
	if cause := context.Cause(run); errors.Is(cause, unavailable) {
		return cause
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return fmt.Errorf("%w: %w", unavailable, err)
}

// Describe words an error answer for an error message: the status, "key
// refused" when it is 401 or 403, and the server's message with key (and
// anything like a key) scrubbed.
func Describe(status int, e Error, key string) string {
	text := strings.TrimSpace(fmt.Sprintf("%d %s", status, http.StatusText(status)))
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		text += ": key refused"
	}
	if msg := Redact(e.Message, key); msg != "" {
		text += ": " + msg
	}
	return text
}
