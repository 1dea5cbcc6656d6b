package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/pipeline/vad"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/telephony"
)

// conversation is one call's engine state. Its loop owns everything but
// the speaker, which plays queued sentences on its own goroutine.
type conversation struct {
	e       *Engine
	live    *telephony.Live
	agent   model.AgentConfig
	audio   media.Audio
	vad     *vad.Detector
	history []llm.Message
	log     *transcriptLog
	metrics *metrics
	turn    int

	speaking  *speech // what the agent is saying now (nil: silent)
	utterance []int16 // the caller's current utterance
	lastHeard time.Time
	nudged    bool // re-engaged the caller since they last spoke
	endCause  string
}

func newConversation(e *Engine, l *telephony.Live) *conversation {
	c := &conversation{
		e: e, live: l, agent: l.Agent.Config,
		audio:   l.Session.Audio(Rate),
		vad:     vad.New(vad.Config{Rate: Rate}),
		metrics: &metrics{},
		log:     &transcriptLog{st: e.Store, call: l.Call, now: e.now},
	}
	c.history = []llm.Message{{Role: llm.RoleSystem, Content: systemPrompt(l.Call, l.Agent)}}
	return c
}

func (c *conversation) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	frames := make(chan []int16, 100)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		defer close(frames)
		for {
			f, err := c.audio.Read(ctx)
			if err != nil {
				return
			}
			select {
			case frames <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer readers.Wait()
	defer cancel()

	c.lastHeard = c.e.now()
	c.greet(ctx)
	silence, nudge := c.silenceLimit(), c.turnTimeout()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for c.endCause == "" {
		select {
		case f, ok := <-frames:
			if !ok {
				c.finish(ctx, "")
				return
			}
			c.onFrame(ctx, f)
		case <-tick.C:
			quiet := c.e.now().Sub(c.lastHeard)
			switch {
			case c.speaking != nil:
			case silence > 0 && quiet > silence:
				c.endCause = call.CauseSilenceTimeout
			case nudge > 0 && quiet > nudge && !c.nudged:
				// turnTimeoutSeconds: re-engage a caller who went quiet.
				c.nudged = true
				c.turn++
				c.history = append(c.history, llm.Message{Role: llm.RoleUser,
					Content: fmt.Sprintf("(The caller has said nothing for %d seconds. Check whether they are still there.)", int(nudge.Seconds()))})
				c.respond(ctx)
			}
		case <-ctx.Done():
			c.finish(ctx, "")
			return
		}
		if c.speaking != nil && c.speaking.done() {
			c.speaking = nil
			c.lastHeard = c.e.now() // silence counts from the end of our turn
		}
	}
	c.finish(ctx, c.endCause)
}

// silenceLimit is silenceEndCallTimeoutSeconds (default 30 s; -1 never).
func (c *conversation) silenceLimit() time.Duration {
	s := 30
	if v := c.agent.SilenceEndCallTimeoutSeconds; v != nil {
		s = *v
	}
	if s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// turnTimeout is turnTimeoutSeconds (unset or -1: never).
func (c *conversation) turnTimeout() time.Duration {
	if v := c.agent.TurnTimeoutSeconds; v != nil && *v > 0 {
		return time.Duration(*v) * time.Second
	}
	return 0
}

func (c *conversation) interruptAfter() time.Duration {
	return time.Duration(c.agent.InterruptionThresholdMs) * time.Millisecond
}

// onFrame runs voice activity detection on one caller frame: barge-in
// while the agent speaks, and the caller's turn when their utterance ends.
func (c *conversation) onFrame(ctx context.Context, f []int16) {
	v := c.vad.Process(f)
	if v.Talking || v.End {
		c.utterance = append(c.utterance, f...)
		c.lastHeard = c.e.now()
		c.nudged = false
	}
	interruptible := c.agent.DisableInterruptions == nil || !*c.agent.DisableInterruptions
	if c.speaking != nil && v.Talking && interruptible && v.Length >= c.interruptAfter() {
		c.interrupt()
	}
	if !v.End {
		return
	}
	u := c.utterance
	c.utterance = nil
	if c.speaking != nil && v.Length < c.interruptAfter() {
		return // a backchannel ("mm-hm") while we talk: not a turn
	}
	if c.speaking != nil {
		if !interruptible {
			return // they talked over us and we kept going: not a turn
		}
		c.interrupt()
	}
	c.userTurn(ctx, u)
}

// interrupt stops the agent's audio now and keeps in the history only what
// the caller heard.
func (c *conversation) interrupt() {
	s := c.speaking
	c.speaking = nil
	s.stop()
	unplayed := c.audio.Flush()
	heard := s.heard(unplayed)
	c.log.assistantHeard(s, heard)
	c.replaceLastAssistant(heard)
}

func (c *conversation) userTurn(ctx context.Context, pcm []int16) {
	if c.e.STT == nil || len(pcm) == 0 {
		return
	}
	res, err := c.e.STT.Transcribe(ctx, pcm, Rate, language(c.agent))
	c.metrics.sttAudio += time.Duration(len(pcm)) * time.Second / Rate
	if err != nil {
		c.e.log().Warn("transcription failed", "call_id", c.live.Call.ID, "err", err)
		return
	}
	text := strings.TrimSpace(res.Text)
	if text == "" {
		return
	}
	c.turn++
	c.log.user(c.turnID(), text, res.Language)
	c.history = append(c.history, llm.Message{Role: llm.RoleUser, Content: text})
	c.respond(ctx)
}

func (c *conversation) turnID() string { return fmt.Sprintf("turn-%d", c.turn) }

// respond asks the model for the agent's turn, speaking each sentence as
// soon as it is complete, and runs the tools it calls.
func (c *conversation) respond(ctx context.Context) {
	for range 4 { // tool rounds
		if c.e.LLM == nil {
			c.endCause = call.CauseEndCallTool
			return
		}
		s := c.say(ctx, "")
		var pending strings.Builder
		res, err := c.e.LLM.Stream(ctx, llm.Request{
			Model: c.e.Model, Messages: c.history, Tools: tools(c.agent), Temperature: c.agent.LLMTemperature,
		}, func(delta string) error {
			pending.WriteString(delta)
			for {
				sentence, rest, ok := cutSentence(pending.String())
				if !ok {
					return nil
				}
				s.add(sentence)
				pending.Reset()
				pending.WriteString(rest)
			}
		})
		if tail := strings.TrimSpace(pending.String()); tail != "" && err == nil {
			s.add(tail)
		}
		s.close()
		c.metrics.addLLM(res.Usage)
		if err != nil {
			c.e.log().Warn("model failed", "call_id", c.live.Call.ID, "err", err)
			if !errors.Is(err, context.Canceled) {
				c.say(ctx, "Sorry, I am having trouble right now. Please try again in a moment.").close()
			}
			return
		}
		if res.Text != "" || len(res.ToolCalls) > 0 {
			c.history = append(c.history, llm.Message{Role: llm.RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls})
		}
		if len(res.ToolCalls) == 0 {
			return
		}
		s.wait(ctx) // what was said before the tool call comes first
		c.speaking = nil
		if !c.runTools(ctx, res.ToolCalls) {
			return
		}
	}
}

// say starts an agent utterance (text, or sentences added later) and
// makes it the current speech.
func (c *conversation) say(ctx context.Context, text string) *speech {
	s := newSpeech(ctx, c, c.turnID())
	if text != "" {
		s.add(text)
	}
	c.speaking = s
	return s
}

func (c *conversation) replaceLastAssistant(heard string) {
	for i := len(c.history) - 1; i >= 0; i-- {
		if c.history[i].Role == llm.RoleAssistant {
			c.history[i].Content = heard
			return
		}
	}
}

// greet opens the call per firstMessageMode.
func (c *conversation) greet(ctx context.Context) {
	mode := ""
	if c.agent.FirstMessageMode != nil {
		mode = *c.agent.FirstMessageMode
	}
	switch {
	case mode == "dynamic":
		c.history = append(c.history, llm.Message{Role: llm.RoleUser,
			Content: "(The " + strings.ToLower(c.live.Call.Direction) + " call has just been answered. Greet the caller.)"})
		c.respond(ctx)
	case c.live.Call.FirstMessage != nil && *c.live.Call.FirstMessage != "":
		text := *c.live.Call.FirstMessage
		c.history = append(c.history, llm.Message{Role: llm.RoleAssistant, Content: text})
		c.say(ctx, text).close()
	}
}

// finish lets the last words play, writes the metrics and ends the call.
func (c *conversation) finish(ctx context.Context, cause string) {
	if c.speaking != nil {
		c.speaking.wait(ctx)
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_ = c.audio.Drain(dctx)
		cancel()
	}
	c.log.writeEnd(c.summarize(ctx), c.metrics)
	if cause != "" {
		c.live.End(cause)
	}
}

// summaryTimeout bounds the post-call summary: the call's end (and its
// post-call webhook) waits for it.
const summaryTimeout = 8 * time.Second

// summarize asks the model for a short summary of the call, stored before
// the call ends so the post-call webhook carries it. Without a model, or
// with nothing said, there is none ("").
func (c *conversation) summarize(ctx context.Context) string {
	if c.e.LLM == nil {
		return ""
	}
	var lines []string
	for _, m := range c.history[1:] {
		if (m.Role == llm.RoleUser || m.Role == llm.RoleAssistant) && m.Content != "" && !strings.HasPrefix(m.Content, "(") {
			who := "Caller"
			if m.Role == llm.RoleAssistant {
				who = "Agent"
			}
			lines = append(lines, who+": "+m.Content)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), summaryTimeout)
	defer cancel()
	res, err := c.e.LLM.Stream(sctx, llm.Request{Model: c.e.Model, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: summaryPrompt},
		{Role: llm.RoleUser, Content: strings.Join(lines, "\n")},
	}}, func(string) error { return nil })
	c.metrics.addLLM(res.Usage)
	if err != nil || strings.TrimSpace(res.Text) == "" {
		c.e.log().Warn("no call summary", "call_id", c.live.Call.ID, "err", err)
		return ""
	}
	return strings.TrimSpace(res.Text)
}

const summaryPrompt = "Summarize this phone call in two or three sentences for the business's records: who called, what they wanted, and the outcome. Plain text."

func language(a model.AgentConfig) string {
	if a.Language != nil {
		return *a.Language
	}
	return "en"
}

// cutSentence splits off the first complete sentence of s.
func cutSentence(s string) (sentence, rest string, ok bool) {
	for i, r := range s {
		if r == '.' || r == '!' || r == '?' || r == '\n' {
			j := i + 1
			if j < len(s) && s[j] != ' ' && s[j] != '\n' {
				continue // "3.5", "e.g."
			}
			if j == len(s) {
				return "", s, false // wait: the next delta may continue it
			}
			if sent := strings.TrimSpace(s[:j]); sent != "" {
				return sent, strings.TrimLeft(s[j:], " \n"), true
			}
		}
	}
	return "", s, false
}
