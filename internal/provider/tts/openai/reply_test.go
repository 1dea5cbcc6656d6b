package openai

import (
	"errors"
	"testing"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/tts"
)

func TestStatusErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		status int
		e      apierr.Error
		kind   error
	}{
		{400, apierr.Error{Message: "Invalid value: 'bob'.", Param: "voice"}, tts.ErrUnknownVoice},
		{422, apierr.Error{Message: "unknown VOICE"}, tts.ErrUnknownVoice},
		{404, apierr.Error{Message: "voice x not found"}, tts.ErrUnknownVoice},
		{500, apierr.Error{Message: "voice engine crashed"}, tts.ErrUnavailable},
		{401, apierr.Error{Message: "bad voice key"}, tts.ErrUnavailable},
		{400, apierr.Error{Message: "String should have at most 4096 characters", Param: "input"}, tts.ErrTextTooLong},
		{400, apierr.Error{Message: "input: too long"}, tts.ErrTextTooLong},
		{400, apierr.Error{Message: "Missing required parameter: 'input'.", Param: "input"}, tts.ErrUnavailable},
		{413, apierr.Error{Message: "input too long"}, tts.ErrUnavailable},
	} {
		if err := statusError(tc.status, tc.e, ""); !errors.Is(err, tc.kind) {
			t.Errorf("%d %+v: %v, want %v", tc.status, tc.e, err, tc.kind)
		}
	}
}
