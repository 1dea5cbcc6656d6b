package pipeline

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// speaker is the agent's voice for a warm transfer's messages (the hold
// message to the caller, the introduction to the destination).
type speaker struct {
	e     *Engine
	agent model.AgentConfig
	rate  int // the line's
}

// Say implements telephony.Speaker: text synthesized onto s, played out.
func (v speaker) Say(ctx context.Context, s media.Session, text string) error {
	if v.e.TTS == nil {
		return nil
	}
	a := s.Audio(v.rate)
	_, err := v.e.TTS.Synthesize(ctx, speechRequest(v.agent, text), v.rate, a.Write)
	if err != nil {
		return err
	}
	return a.Drain(ctx)
}

// transferSummaryTimeout bounds writing the summary the destination of a
// warm transfer hears; the caller is waiting.
const transferSummaryTimeout = 5 * time.Second

// transferSummary is what the destination of a warm transfer is told: the
// model's answer to warmTransferConfig.summaryPrompt over the conversation
// so far ("" without a prompt, a model, or in time).
func (c *conversation) transferSummary(ctx context.Context, history []llm.Message) string {
	cfg := c.agent.WarmTransferConfig
	if c.e.LLM == nil || cfg == nil || cfg.SummaryPrompt == nil || *cfg.SummaryPrompt == "" {
		return ""
	}
	text, err := c.summarizeWith(ctx, *cfg.SummaryPrompt, history, transferSummaryTimeout)
	if err != nil {
		c.e.log().Warn("no transfer summary", "call_id", c.live.Call.ID, "err", err)
		return ""
	}
	return text
}
