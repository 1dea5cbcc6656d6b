package app

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/otlp"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// engineParts are the services a conversation reaches.
type engineParts struct {
	Store     store.Store
	Orgs      *org.Service
	Webhooks  *webhook.Sender
	LLM       llm.Client
	Knowledge *knowledge.Service
	Messages  *sms.Messages
	Writes    *persist.Writer
}

// newEngine builds the conversation engine from the provider settings.
// Without --llm-base-url it still answers calls (a static greeting plays),
// but the first turn that needs the model ends the call FAILED with an
// errorMessage naming the setting.
func newEngine(c Config, p engineParts, reg prometheus.Registerer, log *slog.Logger) *pipeline.Engine {
	e := &pipeline.Engine{
		STT:   c.recognizer(log),
		TTS:   c.synthesizer(log),
		Store: p.Store, Logger: log, Model: c.LLMModel, LLM: p.LLM,
		Knowledge: p.Knowledge, Messages: p.Messages, Writes: p.Writes,
		Webhooks: p.Webhooks, Secret: p.Orgs.WebhookSecret, Metrics: pipeline.NewMetrics(reg),
	}
	if c.OTelEndpoint != "" {
		e.Tracer = otlp.New(c.OTelEndpoint, "parley", nil)
	}
	return e
}

// languageModel is the --llm-base-url client, nil (a nil interface) when
// none is configured. Open builds it once; conversations and generated
// messages share it.
func (c Config) languageModel() llm.Client {
	if c.LLMBaseURL == "" {
		return nil
	}
	return openai.New(openai.Config{BaseURL: c.LLMBaseURL, APIKey: c.LLMAPIKey, Model: c.LLMModel})
}
