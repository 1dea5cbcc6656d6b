package deepgram

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// handshakeError explains a failed Dial: resp is the server's answer (nil
// when none came), whose body the websocket library has cut to 1 KiB; sent
// whether the handshake's headers, with the key, went out. What the server
// said is shown as apierr.Redact allows with key.
func handshakeError(resp *http.Response, err error, language, model, key string, sent bool) error {
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		// Without the URL, which the operator knows: say what failed.
		text, ok := apierr.Unanswered(err, key, sent)
		if !ok {
			text = "the handshake broke off"
		}
		return fmt.Errorf("%w: deepgram: %s", stt.ErrUnavailable, text)
	}
	status := resp.StatusCode
	statusText := http.StatusText(status)
	text := fmt.Sprintf("%d %s", status, statusText)
	// Deepgram's messages often repeat the status: "Bad Request: No such ..."
	msg, _ := apierr.Redact(refusal(resp), key)
	msg = strings.TrimPrefix(msg, statusText+": ")
	if msg != "" && msg != statusText {
		text += ": " + msg
	}
	text += requestSuffix(resp.Header.Get("dg-request-id"))
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w: deepgram refused the API key: %s", stt.ErrUnavailable, text)
	case status == http.StatusBadRequest && strings.Contains(strings.ToLower(text), "language"):
		// "No such model/language/tier combination found."
		return fmt.Errorf("%w: deepgram has no %q for model %q: %s", stt.ErrLanguage, language, model, text)
	}
	return fmt.Errorf("%w: deepgram refused the stream: %s", stt.ErrUnavailable, text)
}

// refusal is the server's reason for refusing a handshake: the dg-error
// header, else err_msg (or another message field) of the JSON body, else
// the body's text; whole (apierr.Redact shortens it once the key is out).
func refusal(resp *http.Response) string {
	if h := strings.TrimSpace(resp.Header.Get("dg-error")); h != "" {
		return h
	}
	if resp.Body == nil {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	var v struct {
		ErrMsg  string `json:"err_msg"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal(body, &v) == nil {
		for _, m := range []string{v.ErrMsg, v.Message, v.Reason} {
			if m != "" {
				return m
			}
		}
	}
	return string(body)
}

// endError explains how the connection ended, from the reader's error and
// the description of an Error message if one came first; nil for a normal
// closure, which is how the server ends a stream after CloseStream. What
// the server said is shown as apierr.Redact allows with key.
func endError(end error, described, requestID, key string) error {
	suffix := apierr.Quote(described, key)
	suffix += requestSuffix(requestID)
	var ce websocket.CloseError
	if errors.As(end, &ce) {
		switch ce.Code {
		case websocket.StatusNormalClosure, websocket.StatusNoStatusRcvd:
			return nil
		}
		reason, _ := apierr.Redact(ce.Reason, key)
		if reason == "" {
			reason = ce.Code.String()
		}
		// The reason names Deepgram's error: DATA-0000 (not audio),
		// NET-0000/NET-0001 (timeouts), ...
		return fmt.Errorf("%w: deepgram closed the stream with %d %s%s", stt.ErrUnavailable, int(ce.Code), reason, suffix)
	}
	return fmt.Errorf("%w: deepgram connection lost%s%s", stt.ErrUnavailable, apierr.Quote(end.Error(), key), suffix)
}

// requestSuffix names Deepgram's request id, which its support asks for.
func requestSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " (request " + id + ")"
}
