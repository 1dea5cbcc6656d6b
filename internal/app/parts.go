package app

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/persist"
	embedopenai "github.com/parley-voice/parley/internal/provider/embed/openai"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/telephony/registration"
	"github.com/parley-voice/parley/internal/webhook"
)

// The constructors of the parts wire builds: each returns its part whole.

// newKnowledge is the knowledge-base service, with an embedder when
// --embeddings-base-url is set.
func newKnowledge(c Config, st store.Store, writes *persist.Writer, log *slog.Logger) (*knowledge.Service, error) {
	s := &knowledge.Service{Store: st, Writes: writes, Logger: log}
	if c.EmbeddingsBaseURL == "" {
		return s, nil
	}
	key := c.EmbeddingsAPIKey
	if key == "" {
		key = c.LLMAPIKey
	}
	emb, err := embedopenai.New(embedopenai.Config{BaseURL: c.EmbeddingsBaseURL, APIKey: key, Model: c.EmbeddingsModel})
	if err != nil {
		return nil, err
	}
	s.Embedder = emb
	return s, nil
}

// newMessages is the text-message service: carriers reached through the
// SSRF guard, status callbacks asked for under base.
func newMessages(c Config, st store.Store, box *secret.Box, model llm.Client, base string, hooks *webhook.Sender, orgs *org.Service,
	writes *persist.Writer, reg prometheus.Registerer, log *slog.Logger) *sms.Messages {
	return &sms.Messages{
		Store: st, Box: box, LLM: model, Model: c.LLMModel,
		HTTPClient: webhook.GuardedClient(c.AllowPrivateWebhooks, 30*time.Second), PublicURL: base,
		Webhooks: hooks, Secret: orgs.WebhookSecret, Writes: writes, Logger: log, Metrics: sms.NewMetrics(reg),
	}
}

// newKeeper keeps the trunks' registrations through ua.
func newKeeper(c Config, st store.Store, box *secret.Box, ua *sipua.UA, writes *persist.Writer, log *slog.Logger) *registration.Keeper {
	return registration.New(registration.Options{
		Store: st, Box: box, Node: nodeID(c), LeaseTTL: c.CallLease, ClaimAll: c.DatabaseURL == "",
		Bind:       func(rc sipua.RegistrationConfig) (registration.Binding, error) { return ua.NewRegistration(rc) },
		MaxBackoff: c.SIPRegisterMaxBackoff, RequestTimeout: c.SIPRegisterTimeout, Writes: writes, Logger: log,
	})
}
