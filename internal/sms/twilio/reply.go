package twilio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/provider/apierr"
)

// APIError is an error answer of the API. It wraps ErrRejected or
// ErrUnavailable (errors.Is) and is found with errors.As.
type APIError struct {
	Kind     error  // ErrRejected or ErrUnavailable
	Status   int    // the HTTP status
	Code     int    // Twilio's error code, like 21211 (0 when the answer had none)
	Message  string // Twilio's message, shortened, without the auth token ("" when it cannot be shown: apierr.Redact)
	MoreInfo string // the documentation URL of Code, when given (and when it can be shown)
}

func (e *APIError) Error() string {
	text := fmt.Sprintf("%v: %d %s", e.Kind, e.Status, http.StatusText(e.Status))
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		text += ": credentials refused"
	}
	if e.Code != 0 {
		text += fmt.Sprintf(": error %d", e.Code)
	}
	if e.Message != "" {
		text += ": " + e.Message
	}
	return text
}

func (e *APIError) Unwrap() error { return e.Kind }

// parseReply reads an answer of status with body; token is scrubbed from
// anything kept of it, and nothing is kept of it where it cannot be.
func parseReply(status int, body []byte, token string) (Sent, error) {
	if status < 200 || status > 299 {
		return Sent{}, parseError(status, body, token)
	}
	var v struct {
		SID          string          `json:"sid"`
		Status       string          `json:"status"`
		ErrorCode    json.RawMessage `json:"error_code"`
		ErrorMessage *string         `json:"error_message"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return Sent{}, fmt.Errorf("%w: the answer is not JSON%s", ErrUnavailable, apierr.Quote(string(body), token))
	}
	if v.SID == "" {
		return Sent{}, fmt.Errorf("%w: the answer has no message sid%s", ErrUnavailable, apierr.Quote(string(body), token))
	}
	s := Sent{SID: v.SID, Status: v.Status, ErrorCode: code(v.ErrorCode)}
	if v.ErrorMessage != nil {
		s.ErrorMessage, _ = apierr.Redact(*v.ErrorMessage, token)
	}
	return s, nil
}

// parseError reads an error answer {"code","message","more_info","status"},
// or takes its text as the message when it is not that.
func parseError(status int, body []byte, token string) *APIError {
	e := &APIError{Kind: ErrUnavailable, Status: status}
	if status == http.StatusBadRequest || status == http.StatusUnprocessableEntity {
		e.Kind = ErrRejected
	}
	var v struct {
		Code     json.RawMessage `json:"code"`
		Message  string          `json:"message"`
		MoreInfo string          `json:"more_info"`
	}
	if json.Unmarshal(body, &v) == nil && (v.Message != "" || len(v.Code) > 0) {
		e.Code = code(v.Code)
		e.Message, _ = apierr.Redact(v.Message, token)
		e.MoreInfo, _ = apierr.Redact(v.MoreInfo, token)
	} else {
		e.Message, _ = apierr.Redact(string(body), token)
	}
	return e
}

// code reads an error code given as a number or a numeric string (0 for
// null, absent or anything else).
func code(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = []byte(strings.TrimSpace(s))
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0
	}
	return n
}
