package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/stt"
)

// parseTranscript reads the text out of a response_format=json answer,
// {"text": "..."}, trimmed. An error quotes the answer as apierr.Redact
// shows it with key.
func parseTranscript(body []byte, key string) (string, error) {
	var v struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("the answer is not JSON%s", apierr.Quote(string(body), key))
	}
	if v.Text == nil {
		return "", fmt.Errorf("the answer has no text%s", apierr.Quote(string(body), key))
	}
	return strings.TrimSpace(*v.Text), nil
}

// statusError is the error of an HTTP error answer. key is scrubbed from
// the server's message.
func statusError(status int, e apierr.Error, key string) error {
	kind := stt.ErrUnavailable
	switch {
	case status == http.StatusRequestEntityTooLarge:
		kind = stt.ErrAudioTooLong
	case (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) &&
		(e.Param == "language" || strings.Contains(strings.ToLower(e.Message), "language")):
		kind = stt.ErrLanguage
	}
	return fmt.Errorf("%w: %s", kind, apierr.Describe(status, e, key))
}
