package pipeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/telephony"
)

// Rate is the sample rate the engine works at: speech engines' native 16 kHz.
const Rate = 16000

// Engine runs conversations with one set of providers.
type Engine struct {
	LLM    llm.Client
	STT    stt.Recognizer
	TTS    tts.Synthesizer
	Store  store.Store
	Logger *slog.Logger
	// Model is the LLM model ("" = the client's default).
	Model string
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Run implements telephony.Conversation.
func (e *Engine) Run(ctx context.Context, l *telephony.Live) {
	c := newConversation(e, l)
	c.run(ctx)
}

func (e *Engine) log() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

var _ telephony.Conversation = (*Engine)(nil)
