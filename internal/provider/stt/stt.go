// Package stt names what Parley asks of a speech-to-text engine: turn one
// utterance of the caller's speech (mono 16-bit PCM, cut out by the VAD)
// into text. Engines live in subpackages (stt/sphinx is the local default,
// pocketsphinx run as a subprocess, so Parley transcribes fully offline).
//
// Implementations wrap the errors below so callers can tell an engine that
// cannot run ([ErrUnavailable]) from a request it cannot serve
// ([ErrLanguage], [ErrAudioTooLong]).
package stt

import (
	"context"
	"errors"
	"time"
)

// Recognizer transcribes one utterance: the caller's speech between the
// VAD's start and end, as mono 16-bit PCM at rate.
//
// Canceling ctx stops the transcription promptly and returns ctx.Err()
// (engines that run a subprocess kill it and wait for it).
type Recognizer interface {
	Transcribe(ctx context.Context, pcm []int16, rate int, language string) (Result, error)
}

// Result is one transcription.
type Result struct {
	Text     string        // "" when nothing was recognised
	Language string        // BCP 47 of the model used
	Audio    time.Duration // the audio given (metrics: stt_audio_duration)
}

var (
	// ErrUnavailable means the engine cannot run: binary or model missing,
	// crashed, ...
	ErrUnavailable = errors.New("stt: engine unavailable")
	// ErrLanguage means the engine has no model for the language asked.
	ErrLanguage = errors.New("stt: language not supported")
	// ErrAudioTooLong means the utterance is over the engine's limit.
	ErrAudioTooLong = errors.New("stt: audio too long")
)

// Duration is how long n samples last at rate (0 when rate is not positive).
func Duration(n, rate int) time.Duration {
	if rate <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(n/rate)*time.Second + time.Duration(n%rate)*time.Second/time.Duration(rate)
}
