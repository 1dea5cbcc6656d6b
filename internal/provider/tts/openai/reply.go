package openai

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// statusError is the error of an HTTP error answer. key is scrubbed from
// the server's message.
func statusError(status int, e apierr.Error, key string) error {
	kind := tts.ErrUnavailable
	msg := strings.ToLower(e.Message)
	refused := status == http.StatusBadRequest || status == http.StatusNotFound || status == http.StatusUnprocessableEntity
	switch {
	case refused && (e.Param == "voice" || strings.Contains(msg, "voice")):
		kind = tts.ErrUnknownVoice
	case refused && (e.Param == "input" || strings.Contains(msg, "input")) &&
		(strings.Contains(msg, "long") || strings.Contains(msg, "at most") || strings.Contains(msg, "maximum")):
		kind = tts.ErrTextTooLong
	}
	return fmt.Errorf("%w: %s", kind, apierr.Describe(status, e, key))
}
