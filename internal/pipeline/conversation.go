package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/media"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/pipeline/turntaking"
	"github.com/parley-voice/parley/internal/pipeline/vad"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/stt"
	"github.com/parley-voice/parley/internal/telephony"
)

// conversation is one call's engine state. Its loop reads the caller's
// audio and owns the history and every decision; transcriptions and agent
// replies run on their own goroutines and report back as events that wake
// the loop's read (wake.go), so the loop keeps hearing the caller (and can
// stop the agent) while the providers work.
type conversation struct {
	agentSide
	live    *telephony.Live
	audio   media.Audio
	arrival media.Arrivals // the audio's packet arrival times (nil: the leg has none)
	wake    waker
	rate    int // the line's sample rate: what the VAD, the detectors, stt and tts work at
	vad     *vad.Detector
	turns   turntaking.Settings // the agent's endpointing, interruption and filler settings
	history []llm.Message
	log     *transcriptLog
	turn    int

	flow      *flowState     // the flow of a conversation_flow agent (nil: a single prompt); a turn works on its own copy
	reply     *reply         // the agent's turn under way (nil: the agent is idle)
	listening *transcription // the caller's utterance being transcribed
	stt       stt.Recognizer // the engine's recognizer, or the one adapted to the agent (domain.go)
	domain    stt.Domain     // what the agent talks about
	adapting  *adaptation    // the adapted recognizer being made (nil: none coming)
	heard     chan heard     // finished transcriptions
	closeDue  atomic.Bool    // the closing line is due (maxConversationDurationSeconds)
	queued    []queuedTurn   // caller turns heard while an uninterruptible reply ran
	talking   atomic.Bool    // the caller is talking (the VAD's verdict on the last frame): no filler over them
	fillers   atomic.Int64   // fillers played so far: the next phrase is the next in turn

	lastHeard    time.Time      // the caller's last speech, or the end of our last turn
	lastSpeechAt time.Time      // when the caller's last speech frame arrived
	nudged       bool           // re-engaged the caller since they last spoke
	closing      bool           // the closing line is under way: no more turns
	screening    *screening     // voicemail detection under way
	timed        []*latency     // the answered turns, for the trace
	failures     map[string]int // failures in a row, per provider
	endCause     string
	failure      string    // errorMessage when the call ends FAILED
	started      time.Time // when the conversation began
}

// frame is one caller frame and when it arrived: its newest packet's
// arrival on a leg that knows it (media.Arrivals), else when it was read.
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
	t.Now, t.Writes = e.Now, e.Writes
	rate := l.Rate
	if rate == 0 {
		rate = Rate
	}
	turns := turntaking.Parse(l.Agent.Config.RuntimeConfig)
	c := &conversation{
		agentSide: agentSide{e: e, agent: l.Agent.Config, call: l.Call, tools: tools, metrics: &metrics{}},
		live:      l, rate: rate,
		audio: l.Session.Audio(rate),
		// The VAD's hangover is the longest the caller's silence may last:
		// the engine ends turns sooner itself, from their words (listen.go).
		vad:      vad.New(vad.Config{Rate: rate, Hangover: turns.MaxSilence, Sensitivity: vadSensitivity(turns.VADSensitivity)}),
		turns:    turns,
		log:      &transcriptLog{t: t, log: e.log()},
		heard:    make(chan heard, 4),
		stt:      e.STT,
		failures: map[string]int{},
		started:  e.now(),
	}
	c.arrival, _ = c.audio.(media.Arrivals)
	c.history = []llm.Message{{Role: llm.RoleSystem, Content: systemPrompt(l.Call, l.Agent)}}
	var err error
	if c.flow, err = newFlowState(l.Agent, l.Call); err != nil {
		c.endCause, c.failure = call.CauseAgentUnavailable, err.Error()
	}
	return c
}

// vadSensitivity is the VAD's Config.Sensitivity for an agent's
// endpointing.vadSensitivity: the VAD reads 0 as "the default", so the
// least sensitive setting goes as the smallest number above it.
func vadSensitivity(s float64) float64 {
	if s <= 0 {
		return math.SmallestNonzeroFloat64
	}
	return s
}

// checkEvery is how often the loop checks the caller's silence.
const checkEvery = 250 * time.Millisecond

// run holds the conversation until it is over and returns its outcome. The
// loop reads the caller's audio on the goroutine that runs the call: each
// frame goes to the VAD the moment the leg hands it over.
func (c *conversation) run(ctx context.Context) call.Outcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer c.wake.stop()

	c.lastHeard = c.e.now()
	if c.endCause != "" { // the agent cannot run
		return c.finish(ctx)
	}
	c.adapt(ctx, c.domain)
	if c.screening = newScreening(c.live.Call, c.agent, c.rate); c.screening == nil {
		c.greet(ctx)
	}
	if d, ok := c.closingIn(); ok {
		t := time.AfterFunc(d, func() { c.closeDue.Store(true); c.wake.wake() })
		defer t.Stop()
	}
	// Reads return every 20 ms while the leg is up, silence or not; the
	// timer wakes the loop for its checks should a leg ever stop giving.
	check := time.AfterFunc(checkEvery, c.wake.wake)
	defer check.Stop()
	nextCheck := time.Now().Add(checkEvery)
	for c.endCause == "" {
		pcm, err := c.audio.Read(c.wake.readCtx(ctx))
		switch {
		case err == nil:
			c.onFrame(ctx, frame{pcm, c.arrived()})
		case ctx.Err() != nil:
			return c.finish(ctx)
		case !errors.Is(err, context.Canceled):
			return c.finish(ctx) // the leg is over
		}
		c.wake.taking()
		c.takeReports(ctx)
		if now := time.Now(); !now.Before(nextCheck) && c.endCause == "" {
			nextCheck = now.Add(checkEvery)
			check.Reset(checkEvery)
			c.checkSilence(ctx)
		}
	}
	return c.finish(ctx)
}

// arrived is when the frame just read arrived: its newest packet's
// arrival when the leg knows it, so the wait for the read counts in the
// turn's latency; else now.
func (c *conversation) arrived() time.Time {
	if c.arrival != nil {
		if at := c.arrival.Arrived(); !at.IsZero() {
			return at
		}
	}
	return time.Now()
}

// takeReports acts on what the goroutines reported: finished
// transcriptions, the end of the agent's turn, the closing line's time.
func (c *conversation) takeReports(ctx context.Context) {
	c.takeAdapted()
	for c.endCause == "" {
		select {
		case h := <-c.heard:
			c.onHeard(ctx, h)
			continue
		case <-c.replyDone():
			c.onReplied(ctx)
			continue
		default:
		}
		break
	}
	if c.endCause == "" && c.closeDue.CompareAndSwap(true, false) {
		c.closeCall(ctx)
	}
}

// checkSilence ends the call of a caller silent past
// silenceEndCallTimeoutSeconds and re-engages one silent past
// turnTimeoutSeconds.
func (c *conversation) checkSilence(ctx context.Context) {
	silence, nudge := c.silenceLimit(), c.turnTimeout()
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

// closingIn is how long until the closing line must start (false: no
// limit).
func (c *conversation) closingIn() (time.Duration, bool) {
	v := c.agent.MaxConversationDurationSeconds
	if v == nil || *v <= 0 {
		return 0, false
	}
	limit := time.Duration(*v) * time.Second
	lead := min(closingLead, limit/2)
	elapsed := time.Duration(0)
	if c.live.Call.StartedAt != nil {
		elapsed = c.e.now().Sub(*c.live.Call.StartedAt)
	}
	return max(0, limit-lead-elapsed), true
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

// greet opens the call per firstMessageMode; a flow opens at its start
// node, which may say its own static text or act at once.
func (c *conversation) greet(ctx context.Context) {
	if fs := c.flow; fs != nil {
		c.log.tool(c.turnID(), transitionCall("", fs.f.Start, reasonStart), "entered "+fs.f.Start)
		switch n := fs.node; {
		case n.Type != flow.Conversation:
			c.startReply(ctx, nil)
			return
		case n.StaticText != "":
			c.speak(ctx, fixedLine{text: fs.render(n.StaticText), remember: true})
			return
		}
	}
	switch note, first := opening(c.live.Call, c.agent); {
	case note != "":
		c.history = append(c.history, llm.Message{Role: llm.RoleUser, Content: note})
		c.startReply(ctx, nil)
	case first != "":
		c.speak(ctx, fixedLine{text: first, remember: true})
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
		c.log.user(q.turnID, q.msg.Content, q.lang, q.said)
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
	if c.flow != nil {
		out.Metrics["flow"] = c.flow.doc()
		out.Variables = c.flow.set
	}
	c.exportTrace()
	c.log.flush() // the line records the call's end once it has the outcome: the transcript is whole by then
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
