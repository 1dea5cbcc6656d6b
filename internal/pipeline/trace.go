package pipeline

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/otlp"
)

// exportTrace sends the call's trace in the background: a "call" span,
// and under it one "turn" span per answered turn (end of the caller's
// speech to the agent's first audio) with a child span per stage. The call
// ends without waiting for it, so a slow collector never holds a call up;
// Engine.Wait waits for exports under way.
func (c *conversation) exportTrace() {
	if c.e.Tracer == nil {
		return
	}
	trace, root := otlp.NewTraceID(), otlp.NewSpanID()
	end := time.Now()
	cause := c.endCause
	if cause == "" {
		cause = "USER_ENDED"
	}
	spans := []otlp.Span{{TraceID: trace, ID: root, Name: "call", Start: c.started, End: end, ErrorMsg: c.failure,
		Attrs: map[string]any{"parley.call_id": c.live.Call.ID, "parley.agent_id": c.live.Call.AgentID,
			"parley.direction": c.live.Call.Direction, "parley.hangup_cause": cause, "parley.turns": len(c.timed)}}}
	for _, l := range c.timed {
		spans = append(spans, l.spans(trace, root)...)
	}
	e, callID := c.e, c.live.Call.ID
	e.exports.Add(1)
	go func() {
		defer e.exports.Done()
		ctx, cancel := context.WithTimeout(context.Background(), otlp.Timeout)
		defer cancel()
		if err := e.Tracer.Export(ctx, spans); err != nil {
			e.log().Warn("trace not exported", "call_id", callID, "err", err)
		}
	}()
}

// stageSpans name the spans of a turn: from one moment to another.
var stageSpans = []struct {
	name     string
	from, to stage
}{
	{"endpointing", stageSpeechEnd, stageEndpointed},
	{"stt", stageSTTAsked, stageSTT},
	{"llm.first_token", stageLLMStart, stageLLMFirstToken},
	{"llm.first_sentence", stageLLMStart, stageTTSStart},
	{"tts.first_audio", stageTTSStart, stageTTSFirstAudio},
	{"line", stageTTSFirstAudio, stageFirstAudio},
}

// spans are the turn's span and its stages' (none before its first audio).
func (l *latency) spans(trace otlp.TraceID, parent otlp.SpanID) []otlp.Span {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at[stageSpeechEnd].IsZero() || l.at[stageFirstAudio].IsZero() {
		return nil
	}
	turn := otlp.NewSpanID()
	out := []otlp.Span{{TraceID: trace, ID: turn, Parent: parent, Name: "turn", Start: l.at[stageSpeechEnd],
		End: l.at[stageFirstAudio], Attrs: map[string]any{"parley.turn_id": l.turnID}}}
	for _, s := range stageSpans {
		if l.at[s.from].IsZero() || l.at[s.to].IsZero() {
			continue
		}
		out = append(out, otlp.Span{TraceID: trace, ID: otlp.NewSpanID(), Parent: turn, Name: s.name,
			Start: l.at[s.from], End: l.at[s.to]})
	}
	return out
}
