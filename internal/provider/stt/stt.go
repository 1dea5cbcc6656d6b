// Package stt names what Parley asks of a speech-to-text engine: turn one
// utterance of the caller's speech (mono 16-bit PCM, cut out by the VAD)
// into text. Engines live in subpackages (stt/sphinx is the local default,
// pocketsphinx decoding inside the process, so Parley transcribes fully
// offline).
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

// Streamer is a Recognizer that also takes audio while the caller is still
// speaking (cloud engines with a streaming API), so the final text is ready
// moments after the end of the turn instead of a whole transcription later.
// The engine opens a Stream when the VAD hears speech start and closes it at
// the end of the turn.
type Streamer interface {
	Recognizer
	// Open starts one utterance of mono 16-bit PCM at rate. Canceling ctx
	// abandons it (Close then returns ctx.Err()).
	Open(ctx context.Context, rate int, language string) (Stream, error)
}

// Stream is one utterance being transcribed as it is spoken. Write and
// Close are called from one goroutine.
type Stream interface {
	// Write sends the next audio (any size, in order). An error means the
	// stream is broken; Close still must be called and returns the cause.
	Write(pcm []int16) error
	// Close ends the utterance, waits for the engine's final text and frees
	// the stream's resources (connection, goroutines). Result.Audio is the
	// audio written.
	Close() (Result, error)
}

// Partial is a Stream that can say what it has recognised of the utterance
// so far, so the conversation can judge whether the caller finished a
// sentence (the adaptive end of turn). Partial is safe to call from any
// goroutine, concurrently with Write; it returns "" when nothing is
// recognised yet. The text may lag the audio written by the engine's
// decoding delay, and may change until Close.
type Partial interface {
	Partial() string
}

// Domain is what a conversation is about: the texts a caller's words are
// likely drawn from (the agent's prompt, first message, flow nodes,
// transfer conditions and knowledge sources). A recognizer that can use it
// (stt/sphinx builds a language model and dictionary from it) implements
// [Adaptable].
type Domain struct {
	// Key identifies Texts: equal keys mean equal texts, so whatever was
	// built from them may be reused (a content hash, not an agent id, so
	// an edited agent gets a new model).
	Key   string
	Texts []string
}

// Adaptable is a Recognizer that can be tuned to a conversation's domain.
type Adaptable interface {
	Recognizer
	// Adapt returns the recognizer to use for conversations in d: it may
	// build a model the first time a key is seen (and cache it), so callers
	// start it early (at answer) and use what it returns for the whole
	// call. An error leaves the caller with the unadapted recognizer.
	Adapt(ctx context.Context, d Domain) (Recognizer, error)
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
