package openai

import (
	"context"
	"errors"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// wholeStream gathers an utterance and transcribes it in one request at
// Close: a Streamer's stream where the server offers no realtime session.
type wholeStream struct {
	r        *Recognizer
	ctx      context.Context
	rate     int
	language string
	pcm      []int16
	closed   bool
	res      stt.Result
	err      error
}

func (s *Streamer) whole(ctx context.Context, rate int, language string) *wholeStream {
	return &wholeStream{r: s.Recognizer, ctx: ctx, rate: rate, language: language}
}

// Write implements stt.Stream. Audio past what one request takes is kept
// out, and Close says the utterance was too long.
func (w *wholeStream) Write(pcm []int16) error {
	if w.closed {
		return errors.New("openai stt: Write after Close")
	}
	if len(w.pcm) <= maxSamples {
		w.pcm = append(w.pcm, pcm[:min(len(pcm), maxSamples+1-len(w.pcm))]...)
	}
	return nil
}

// Close implements stt.Stream: the utterance goes out in one request.
func (w *wholeStream) Close() (stt.Result, error) {
	if !w.closed {
		w.closed = true
		w.res, w.err = w.r.Transcribe(w.ctx, w.pcm, w.rate, w.language)
		w.pcm = nil
	}
	return w.res, w.err
}
