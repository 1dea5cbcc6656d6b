package pipeline

import (
	"context"
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

// conversation is one call's engine state. Its loop owns the history and
// every decision; transcriptions and agent replies run on their own
// goroutines and report back as events, so the loop keeps hearing the
// caller (and can stop the agent) while the providers work.
type conversation struct {
	e       *Engine
	live    *telephony.Live
	agent   model.AgentConfig
	tools   []model.CustomTool
	audio   media.Audio
	vad     *vad.Detector
	history []llm.Message
	log     *transcriptLog
	metrics *metrics
	turn    int

	reply     *reply         // the agent's turn under way (nil: the agent is idle)
	listening *transcription // the caller's utterance being transcribed
	heard     chan heard     // finished transcriptions
	queued    []queuedTurn   // caller turns heard while an uninterruptible reply ran

	lastHeard    time.Time      // the caller's last speech, or the end of our last turn
	lastSpeechAt time.Time      // when the caller's last speech frame was read
	nudged       bool           // re-engaged the caller since they last spoke
	closing      bool           // the closing line is under way: no more turns
	screening    *screening     // voicemail detection under way
	timed        []*latency     // the answered turns, for the trace
	kbIDs        []string       // the agent's knowledge bases
	failures     map[string]int // failures in a row, per provider
	endCause     string
	failure      string    // errorMessage when the call ends FAILED
	started      time.Time // when the conversation began
}

// frame is one caller frame and when it was read from the session.
type frame struct {
	pcm []int16
	at  time.Time
}

func newConversation(e *Engine, l *telephony.Live, tools []model.CustomTool) *conversation {
	answered := l.Answered
	if answered.IsZero() {
		answered = e.now()
	}
	t := call.NewTranscript(e.Store, l.Call, answered)
	t.Now = e.Now
	c := &conversation{
		e: e, live: l, agent: l.Agent.Config, tools: tools,
		audio:    l.Session.Audio(Rate),
		vad:      vad.New(vad.Config{Rate: Rate}),
		metrics:  &metrics{},
		log:      &transcriptLog{t: t, log: e.log()},
		heard:    make(chan heard, 4),
		failures: map[string]int{},
		started:  e.now(),
	}
	c.history = []llm.Message{{Role: llm.RoleSystem, Content: systemPrompt(l.Call, l.Agent)}}
	return c
}

// run holds the conversation until it is over and returns its outcome.
func (c *conversation) run(ctx context.Context) call.Outcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	frames := make(chan frame, 100)
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
			case frames <- frame{f, time.Now()}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer readers.Wait()
	defer cancel()

	c.lastHeard = c.e.now()
	if c.screening = newScreening(c.live.Call, c.agent); c.screening == nil {
		c.greet(ctx)
	}
	silence, nudge := c.silenceLimit(), c.turnTimeout()
	closeAt := c.closingTimer()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for c.endCause == "" {
		select {
		case f, ok := <-frames:
			if !ok {
				return c.finish(ctx)
			}
			c.onFrame(ctx, f)
		case h := <-c.heard:
			c.onHeard(ctx, h)
		case <-c.replyDone():
			c.onReplied(ctx)
		case <-closeAt:
			c.closeCall(ctx)
		case <-tick.C:
			quiet := c.e.now().Sub(c.lastHeard)
			switch {
			case c.reply != nil || c.listening != nil || c.closing:
			case silence > 0 && quiet > silence:
				c.endCause = call.CauseSilenceTimeout
			case nudge > 0 && quiet > nudge && !c.nudged:
				// turnTimeoutSeconds: re-engage a caller who went quiet.
				c.nudged = true
				c.history = append(c.history, llm.Message{Role: llm.RoleUser,
					Content: fmt.Sprintf("(The caller has said nothing for %d seconds. Check whether they are still there.)", int(nudge.Seconds()))})
				c.startReply(ctx, nil)
			}
		case <-ctx.Done():
			return c.finish(ctx)
		}
	}
	return c.finish(ctx)
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

// closingLead is how long before maxConversationDurationSeconds the agent
// starts its closing line; the telephony layer hangs up at the limit.
const closingLead = 5 * time.Second

// closingTimer fires when the closing line must start (nil: no limit).
func (c *conversation) closingTimer() <-chan time.Time {
	v := c.agent.MaxConversationDurationSeconds
	if v == nil || *v <= 0 {
		return nil
	}
	limit := time.Duration(*v) * time.Second
	lead := min(closingLead, limit/2)
	elapsed := time.Duration(0)
	if c.live.Call.StartedAt != nil {
		elapsed = c.e.now().Sub(*c.live.Call.StartedAt)
	}
	return time.After(max(0, limit-lead-elapsed))
}

const closingLine = "I'm sorry, we have reached the time limit for this call. Thank you for calling, goodbye."

// closeCall stops whatever the agent was doing and says the closing line;
// the call ends MAX_DURATION once it has played.
func (c *conversation) closeCall(ctx context.Context) {
	if c.reply != nil {
		c.interrupt()
	}
	if c.listening != nil {
		c.listening.abandon()
		c.listening = nil
	}
	c.closing = true
	c.speak(ctx, fixedLine{text: closingLine, endCause: call.CauseMaxDuration, remember: true})
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
		c.startReply(ctx, nil)
	case c.live.Call.FirstMessage != nil && *c.live.Call.FirstMessage != "":
		c.speak(ctx, fixedLine{text: *c.live.Call.FirstMessage, remember: true})
	}
}

// finish stops what is under way, hangs up when the conversation decided
// to end the call, and reports the outcome: the cause, the summary and the
// metrics, which the line records with the call's end.
func (c *conversation) finish(ctx context.Context) call.Outcome {
	if c.reply != nil {
		if c.endCause == "" {
			c.interrupt() // the caller hung up or the call was ended elsewhere
		} else {
			c.awaitReply(ctx)
		}
	}
	if c.listening != nil {
		c.listening.abandon()
	}
	for _, q := range c.queued { // heard, never answered
		c.log.user(q.turnID, q.msg.Content, q.lang)
		c.history = append(c.history, q.msg)
	}
	// Hang up before the summary: nobody waits on the line for it.
	switch {
	case c.endCause == call.CauseTransferred:
		// The caller is with someone else now: the telephony layer owns
		// the line and ends the call when either side hangs up.
	case c.failure != "":
		c.live.Fail(c.endCause, c.failure)
	case c.endCause != "":
		c.live.End(c.endCause)
	}
	out := call.Outcome{HangupCause: c.endCause, ErrorMessage: c.failure}
	if s := c.summarize(ctx); s != "" {
		out.Summary = &s
	}
	out.Metrics = c.metrics.doc() // after the summary: its tokens count
	c.exportTrace()
	return out
}

// summarize asks the model for a short summary of the call, within the
// post-call budget. Without a model, or with nothing said, there is none
// ("").
func (c *conversation) summarize(ctx context.Context) string {
	if c.e.LLM == nil {
		c.e.log().Info("no call summary: no language model is configured (--llm-base-url)", "call_id", c.live.Call.ID)
		return ""
	}
	if len(dialogue(c.history)) == 0 {
		return ""
	}
	budget := c.live.PostCallBudget
	if budget <= 0 {
		budget = telephony.DefaultPostCallBudget
	}
	text, err := c.summarizeWith(context.WithoutCancel(ctx), summaryPrompt, c.history, budget)
	if err != nil || text == "" {
		c.e.log().Warn("no call summary", "call_id", c.live.Call.ID, "err", err)
		return ""
	}
	return text
}

// summarizeWith asks the model, under prompt, about the dialogue of
// history, within timeout; the usage counts in the call's metrics.
func (c *conversation) summarizeWith(ctx context.Context, prompt string, history []llm.Message, timeout time.Duration) (string, error) {
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := c.e.LLM.Stream(sctx, llm.Request{Model: c.e.Model, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: prompt},
		{Role: llm.RoleUser, Content: strings.Join(dialogue(history), "\n")},
	}}, func(string) error { return nil })
	c.metrics.addLLM(res.Usage)
	return strings.TrimSpace(res.Text), err
}

// dialogue is what was said, one "Caller: ..." or "Agent: ..." line per
// message, without the system prompt, tool traffic or the engine's own
// notes to the model (in parentheses).
func dialogue(history []llm.Message) []string {
	var lines []string
	for _, m := range history {
		if (m.Role == llm.RoleUser || m.Role == llm.RoleAssistant) && m.Content != "" && !strings.HasPrefix(m.Content, "(") {
			who := "Caller"
			if m.Role == llm.RoleAssistant {
				who = "Agent"
			}
			lines = append(lines, who+": "+m.Content)
		}
	}
	return lines
}

const summaryPrompt = "Summarize this phone call in two or three sentences for the business's records: who called, what they wanted, and the outcome. Plain text."

func language(a model.AgentConfig) string {
	if a.Language != nil {
		return *a.Language
	}
	return "en"
}

func (c *conversation) turnID() string { return fmt.Sprintf("turn-%d", c.turn) }
