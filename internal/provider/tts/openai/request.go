package openai

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"

	"github.com/parley-voice/parley/internal/provider/apierr"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// MaxText is the most characters (runes) of text the API takes at once.
const MaxText = 4096

// The API's range of speeds.
const (
	minSpeed = 0.25
	maxSpeed = 4.0
)

// speechRequest is the JSON body of POST /audio/speech.
type speechRequest struct {
	Model          string  `json:"model"`
	Input          string  `json:"input"`
	Voice          string  `json:"voice"`
	ResponseFormat string  `json:"response_format"`
	Speed          float64 `json:"speed,omitempty"`       // 0: the server's 1.0
	SampleRate     int     `json:"sample_rate,omitempty"` // 0: the model's own
}

// body is the request body for r, asking for audio at sampleRate (0: not
// asked). r.Language and r.Temperature have no counterpart in the API and
// are not sent.
func (s *Synthesizer) body(r tts.Request, sampleRate int) []byte {
	req := speechRequest{
		Model:          s.model,
		Input:          r.Text,
		Voice:          r.Voice,
		ResponseFormat: s.format,
		Speed:          speed(r.Speed),
		SampleRate:     sampleRate,
	}
	if req.Voice == "" {
		req.Voice = s.voice
	}
	b, _ := json.Marshal(req) // strings and a finite number: it cannot fail
	return b
}

// speed is the API's speed for a Request.Speed: clamped to 0.25..4.0, and 0
// (not sent) for 0 or NaN.
func speed(v float64) float64 {
	if v == 0 || math.IsNaN(v) {
		return 0
	}
	return min(max(v, minSpeed), maxSpeed)
}

// askRate is the sample_rate to ask for when the line plays at rate: the
// line's own with a WAV (whose header says what really came), the
// configured raw rate with pcm, and nothing once the server refused the
// field.
func (s *Synthesizer) askRate(rate int) int {
	switch {
	case s.rateRefused.Load():
		return 0
	case s.format == FormatWAV:
		return rate
	}
	return s.pcmRateAsked
}

// refusesRate reports whether an error answer refuses the sample_rate
// field (a strict API's "Unrecognized request argument supplied:
// sample_rate", or a rate out of a server's range).
func refusesRate(status int, e apierr.Error) bool {
	return (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) &&
		(e.Param == "sample_rate" || strings.Contains(e.Message, "sample_rate"))
}
