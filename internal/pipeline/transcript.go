package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/knowledge"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/tts"
)

// transcriptLog appends the call's transcript entries as they happen, so a
// crash keeps what was said. It writes nothing else of the call's record:
// the summary and metrics go back to the line as the conversation's outcome.
//
// An entry is stamped when it is made ("endAt"; its "at" is when it
// began: the caller's first word, the agent's first audio on the line)
// and written behind the turn, never
// in its way: a store write (a transaction, the row's whole transcript
// rewritten, a disk sync) on the loop delayed the caller's next frames and
// the agent's answer, and more so the longer the call. One writer
// goroutine runs while entries wait, takes all of them in one transaction,
// and stops when none are left; entries land in the order they were made.
// A batch the database does not take is retried (call.Transcript, the
// engine's Writes) while the entries made meanwhile wait behind it; only a
// batch still refused after the Writer's budget is given up, logged and
// counted (parley_store_writes_abandoned_total).
type transcriptLog struct {
	t   *call.Transcript
	log *slog.Logger

	mu      sync.Mutex
	pending []map[string]any
	idle    chan struct{} // closed when the writer has stopped; nil before it first runs
	writing bool
}

// span is when an entry's line began and ended (zero: when it is made).
type span struct{ began, ended time.Time }

// append adds e, said over s.
func (t *transcriptLog) append(e map[string]any, s span) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.t.StampSpan(e, s.began, s.ended)
	t.pending = append(t.pending, e)
	if !t.writing {
		t.writing, t.idle = true, make(chan struct{})
		go t.write()
	}
}

// write writes what is pending until nothing is.
func (t *transcriptLog) write() {
	for {
		t.mu.Lock()
		batch := t.pending
		t.pending = nil
		if len(batch) == 0 {
			t.writing = false
			close(t.idle)
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
		if err := t.t.AppendStamped(context.Background(), batch); err != nil {
			t.log.Error("transcript entries lost: the database did not take them", "call_id", t.t.CallID, "entries", len(batch), "err", err)
		}
	}
}

// flush waits until every entry made so far is written.
func (t *transcriptLog) flush() {
	t.mu.Lock()
	idle := t.idle
	t.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

// user records what the caller said, from their first word to their last.
func (t *transcriptLog) user(turnID, text, lang string, said span) {
	t.append(userEntry(turnID, text, lang), said)
}

// assistant records what the agent said in full, from its first audio to
// now, when it has played out.
func (t *transcriptLog) assistant(turnID, text string, began time.Time) {
	if text == "" {
		return
	}
	t.append(assistantEntry(turnID, text), span{began: began})
}

// assistantHeard records an interrupted utterance: only what was heard.
func (t *transcriptLog) assistantHeard(s *speech, heard string) {
	if heard == "" {
		return
	}
	t.append(map[string]any{"role": "assistant", "type": "message", "text": heard, "turnId": s.turnID, "isFinal": true, "interrupted": true}, span{began: s.startedAt()})
}

// filler records a filler played while a tool ran: its phrase, or the
// sound played instead. Never a message: the model did not say it.
func (t *transcriptLog) filler(turnID, text, sound string) {
	t.append(fillerEntry(turnID, text, sound), span{})
}

// tool records a tool call and its result as it comes.
func (t *transcriptLog) tool(turnID string, c llm.ToolCall, output string) {
	t.append(toolEntry(turnID, c, output), span{})
}

// toolRan records a tool call from when it was made to its result.
func (t *transcriptLog) toolRan(turnID string, c llm.ToolCall, output string, began time.Time) {
	t.append(toolEntry(turnID, c, output), span{began: began})
}

// The transcript's entries, a call's and a text chat's alike. The store
// adds "seq" and call.Transcript.StampSpan "at" and "endAt".

// userEntry is what the caller said in turn turnID, in language lang.
func userEntry(turnID, text, lang string) map[string]any {
	if lang == "" {
		lang = "en"
	}
	return map[string]any{"role": "user", "type": "message", "text": text, "turnId": turnID, "isFinal": true, "language": lang}
}

// assistantEntry is what the agent said in full.
func assistantEntry(turnID, text string) map[string]any {
	return map[string]any{"role": "assistant", "type": "message", "text": text, "turnId": turnID, "isFinal": true}
}

// fillerEntry is a filler the caller heard while a tool ran: a phrase
// (text) or a sound ("soft").
func fillerEntry(turnID, text, sound string) map[string]any {
	e := map[string]any{"role": "assistant", "type": "filler", "turnId": turnID}
	if text != "" {
		e["text"] = text
	}
	if sound != "" {
		e["sound"] = sound
	}
	return e
}

// toolEntry is one tool call and its result.
func toolEntry(turnID string, c llm.ToolCall, output string) map[string]any {
	return map[string]any{"role": "tool", "type": "tool_call", "turnId": turnID,
		"tool": map[string]any{"name": c.Name, "args": c.Arguments}, "result": map[string]any{"output": output}}
}

// metrics are the seed's usage figures for the call, plus Parley's own:
// turn_latency (one entry per answered turn, see latency.figures) and
// interruptions (how fast each barge-in silenced the agent).
type metrics struct {
	mu                                    sync.Mutex
	promptTokens, completionTokens, cache int
	sttAudio, ttsAudio                    time.Duration
	ttsChars                              int
	turns                                 []map[string]any
	interruptions                         []float64 // ms from the threshold frame to the audio stopped
	retrievals                            []map[string]any
	prom                                  *Metrics
}

func (m *metrics) addSTT(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sttAudio += d
}

func (m *metrics) addTurn(id string, f map[string]float64) {
	e := map[string]any{"turnId": id}
	for k, v := range f {
		e[k] = v
	}
	m.mu.Lock()
	m.turns = append(m.turns, e)
	m.mu.Unlock()
	m.prom.observeTurn(f)
}

// addRetrieval records a knowledge-base retrieval (metrics
// knowledge_retrievals: what was asked, what came back, how long it took).
func (m *metrics) addRetrieval(turnID, query string, hits []knowledge.Hit, took time.Duration, err error) {
	chunks := []map[string]any{}
	for _, h := range hits {
		chunks = append(chunks, map[string]any{"sourceId": h.SourceID, "displayName": h.DisplayName, "score": h.Score, "text": h.Text})
	}
	e := map[string]any{"turnId": turnID, "query": query, "chunks": chunks, "ms": float64(took.Microseconds()) / 1000}
	if err != nil {
		e["error"] = err.Error()
	}
	m.mu.Lock()
	m.retrievals = append(m.retrievals, e)
	m.mu.Unlock()
}

func (m *metrics) interrupted(d time.Duration) {
	m.mu.Lock()
	m.interruptions = append(m.interruptions, float64(d.Microseconds())/1000)
	m.mu.Unlock()
	m.prom.observeInterrupt(d)
}

func (m *metrics) addLLM(u llm.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.promptTokens += u.PromptTokens
	m.completionTokens += u.CompletionTokens
	m.cache += u.CachedPromptTokens
}

func (m *metrics) addTTS(s tts.Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ttsAudio += s.Audio
	m.ttsChars += s.Characters
}

func (m *metrics) doc() map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return map[string]any{
		"llm_prompt_tokens": m.promptTokens, "llm_completion_tokens": m.completionTokens,
		"llm_prompt_cached_tokens": m.cache, "llm_input_audio_tokens": 0, "llm_output_audio_tokens": 0,
		"stt_audio_duration": m.sttAudio.Seconds(), "tts_audio_duration": m.ttsAudio.Seconds(),
		"tts_characters_count": m.ttsChars,
		"turn_latency":         append([]map[string]any{}, m.turns...),
		"interruption_stop_ms": append([]float64{}, m.interruptions...),
		"knowledge_retrievals": append([]map[string]any{}, m.retrievals...),
	}
}
