package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/otlp"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/telephony"
	"github.com/parley-voice/parley/internal/webhook"
)

// Rate is the sample rate the engine works at on a session that does not
// say its own (telephony.Live.Rate 0: an in-memory session). On a phone
// line it works at the leg's rate instead: 16 kHz for G.722, 8 kHz for
// G.711.
const Rate = 16000

// Engine runs conversations with one set of providers.
type Engine struct {
	LLM   llm.Client
	STT   stt.Recognizer
	TTS   tts.Synthesizer
	Store store.Store
	// Writes retries the transcript's appends the database does not take
	// (nil: the defaults of persist).
	Writes *persist.Writer
	Logger *slog.Logger
	// Model is the LLM model ("" = the client's default).
	Model string
	// Webhooks calls custom tools; Secret finds the organization's signing
	// secret for them. Without Webhooks custom tools answer with an error.
	Webhooks *webhook.Sender
	Secret   func(ctx context.Context, orgID string) (string, error)
	// Metrics receives per-turn latency (nil: not exported).
	Metrics *Metrics
	// Messages texts callers for the send_message tool (nil: not offered).
	Messages Messenger
	// Knowledge retrieves from the agent's knowledge bases (nil: agents
	// answer without them).
	Knowledge Retriever
	// RetrievalBudget bounds automatic retrieval before the model is asked
	// (0: defaultRetrievalBudget); past it the turn goes on without chunks.
	RetrievalBudget time.Duration
	// Tracer receives one OpenTelemetry trace per call (nil: none).
	Tracer *otlp.Exporter
	// Now is the clock (tests); default time.Now.
	Now func() time.Time

	// Benchmarks watch turns and interruptions as they happen; tests, an
	// utterance starting to wait for the adapted recognizer.
	onTurn         func(f map[string]float64)
	onInterrupt    func(d time.Duration)
	onAwaitAdapted func()

	exports sync.WaitGroup // traces being sent
}

// Run implements telephony.Conversation.
func (e *Engine) Run(ctx context.Context, l *telephony.Live) call.Outcome {
	tools, kbIDs, knowledge := e.agentResources(ctx, l.Call)
	c := newConversation(e, l, tools)
	c.kbIDs = kbIDs
	c.domain = agentDomain(l.Agent, tools, knowledge)
	c.metrics.prom = e.Metrics
	return c.run(ctx)
}

// Wait waits for the traces of ended calls still being exported.
func (e *Engine) Wait() { e.exports.Wait() }

// agentResources are the agent's enabled custom tools, its knowledge
// bases and, for a recognizer that adapts to the agent, their sources'
// text. A store error leaves the call without them rather than failing it.
func (e *Engine) agentResources(ctx context.Context, c model.Call) (tools []model.CustomTool, kbIDs, knowledge []string) {
	if e.Store == nil || c.AgentID == "" {
		return nil, nil, nil
	}
	err := e.Store.View(ctx, func(tx store.Tx) error {
		byAgent, err := tx.ListCustomTools(ctx, c.OrgID, []string{c.AgentID})
		if err != nil {
			return err
		}
		for _, t := range byAgent[c.AgentID] {
			if t.Enabled {
				tools = append(tools, t)
			}
		}
		kbs, err := tx.AgentKnowledgeBases(ctx, c.OrgID, []string{c.AgentID})
		for _, kb := range kbs[c.AgentID] {
			kbIDs = append(kbIDs, kb.ID)
		}
		if _, adaptable := e.STT.(stt.Adaptable); err != nil || !adaptable {
			return err
		}
		knowledge, err = knowledgeTexts(ctx, tx, c.OrgID, kbIDs)
		return err
	})
	if err != nil {
		e.log().Error("agent tools or knowledge bases not loaded", "call_id", c.ID, "err", err)
	}
	return tools, kbIDs, knowledge
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
