// Package apierr owns reading error answers of HTTP provider APIs and
// keeping secrets out of error text: [Parse] finds the message (and the
// request field it is about) in an error answer of OpenAI's API or of the
// servers that copy it, [Shorten] makes text from the network fit an error
// message, and [Redact] scrubs the secret the request carried, and
// anything that looks like an API key, from it, or says it cannot be
// shown when the secret is too short to be told from ordinary text
// ([MinSecretLen]); [Describe] words an error answer; [BrokeOff] and
// [Unanswered] explain a request that got no answer. What an answer means
// (which error kind a status and message are) stays with each provider.
package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
// (speaches), or else the text itself. The message is one line of valid
// UTF-8 but not shortened: it may quote the key, and a cut could leave part
// of it where Redact no longer finds it, so Redact (or Describe) shortens
// it once the key is out.
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
			return Error{Message: fold(obj.Message), Param: obj.Param}
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return Error{Message: fold(s)}
		case v.Message != "":
			return Error{Message: fold(v.Message)}
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return Error{Message: fold(s)}
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
			e.Message = fold(strings.Join(msgs, "; "))
			return e
		}
	}
	return Error{Message: fold(string(body))}
}

// Shorten makes s one line of valid UTF-8 of at most 203 bytes: white
// space folded to single spaces, and anything past 200 bytes cut off and
// marked with "..." (before a "[redacted]" the cut would fall in).
func Shorten(s string) string {
	s = fold(s)
	if len(s) > 200 {
		cut := 200
		if i := strings.LastIndex(s[:min(len(s), cut+len(redacted)-1)], redacted); i >= 0 && i+len(redacted) > cut {
			cut = i
		}
		s = strings.ToValidUTF8(s[:cut], "") + "..."
	}
	return s
}

// BrokeOff explains a request that got no complete answer: the caller's
// cancel (ctx's error, after prefix), the cause the client's own run
// context was ended with when it is of kind unavailable (a timeout the
// client set), or else the network, as unavailable, worded by Unanswered
// (key is the request's, sent whether its headers went out: Trace). When
// that text cannot be shown, a fixed wording stands for it.
func BrokeOff(ctx, run context.Context, err error, prefix string, unavailable error, key string, sent bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", prefix, ctx.Err())
	}
	if cause := context.Cause(run); errors.Is(cause, unavailable) {
		return cause
	}
	text, ok := Unanswered(err, key, sent)
	if !ok {
		text = "the answer broke off or could not be read"
	}
	return fmt.Errorf("%w: %s", unavailable, text)
}

// Describe words an error answer for an error message: the status, "key
// refused" when it is 401 or 403, and the server's message as Redact
// shows it with key, or no message when Redact says it cannot be shown.
func Describe(status int, e Error, key string) string {
	text := strings.TrimSpace(fmt.Sprintf("%d %s", status, http.StatusText(status)))
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		text += ": key refused"
	}
	return text + Quote(e.Message, key)
}
