// Package tts names what Parley asks of a text-to-speech engine: turn a
// piece of text into mono 16-bit PCM at the rate the caller wants, streamed
// as it is produced so a caller can start playing before the sentence is
// done. Engines live in subpackages (tts/espeak is the local default).
package tts

import (
	"context"
	"errors"
	"time"
)

// Request is one utterance to synthesize.
type Request struct {
	Text     string
	Voice    string  // engine voice id ("" = the engine default for Language)
	Language string  // BCP 47, e.g. "en", "en-US", "fr" ("" = en)
	Speed    float64 // 0.5..1.5, 0 = 1.0
	// Temperature is the agent's voiceTemperature, 0..2 (nil = engine
	// default): how much the voice varies. Engines map it to their own knob
	// (ElevenLabs: stability = 1 - Temperature/2) or ignore it (espeak-ng,
	// OpenAI); each engine's doc says which.
	Temperature *float64
}

// Synthesizer turns text into audio, streamed: out gets mono 16-bit PCM at
// rate (any size chunks, in order) as soon as it is produced; an error from
// out stops synthesis and is returned. Canceling ctx stops it promptly (the
// subprocess is killed and waited for: no zombies, no leaked goroutines).
type Synthesizer interface {
	Synthesize(ctx context.Context, r Request, rate int, out func(pcm []int16) error) (Stats, error)
}

// Stats describes one synthesis, for metrics: tts_characters_count and
// tts_audio_duration.
type Stats struct {
	Characters int           // characters (runes) of text actually spoken
	Audio      time.Duration // audio handed to out
}

var (
	// ErrUnavailable means the engine cannot run: binary missing, crashed, ...
	ErrUnavailable = errors.New("tts: engine unavailable")
	// ErrTextTooLong means Request.Text is over the engine's limit; split it.
	ErrTextTooLong = errors.New("tts: text too long")
	// ErrUnknownVoice means Request.Voice names no voice the engine has.
	ErrUnknownVoice = errors.New("tts: unknown voice")
)
