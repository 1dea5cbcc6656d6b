package openai

import (
	"encoding/json"
	"math"

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
	Speed          float64 `json:"speed,omitempty"` // 0: the server's 1.0
}

// body is the request body for r. r.Language and r.Temperature have no
// counterpart in the API and are not sent.
func (s *Synthesizer) body(r tts.Request) []byte {
	req := speechRequest{
		Model:          s.model,
		Input:          r.Text,
		Voice:          r.Voice,
		ResponseFormat: "pcm",
		Speed:          speed(r.Speed),
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
