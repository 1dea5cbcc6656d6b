package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/flow"
	"github.com/parley-voice/parley/internal/provider/llm"
)

// reply is one agent turn on its own goroutine: the model's answer spoken
// sentence by sentence, its tool calls run, until the model is done and
// the last word has played; or a fixed line. The loop reads its results
// once done is closed, or cancels it (the caller interrupted).
type reply struct {
	c      *conversation
	ctx    context.Context
	cancel context.CancelFunc
	turnID string
	lat    *latency   // nil for turns that answer no caller speech
	fixed  *fixedLine // nil: ask the model
	base   []llm.Message
	done   chan struct{}

	// Written by the reply's goroutine, read by the loop after done.
	added []llm.Message // what this turn adds to the history
	// spoken is the index in added of the message the current speech
	// says (-1: none yet). An interruption trims that message and no
	// other: earlier messages were heard in full.
	spoken   int
	endCause string
	failed   error // the model failed (the loop decides what next)
	mute     error // speech synthesis failed: the caller heard nothing of some of it

	// flow is the turn's copy of the conversation's flow (nil: a single
	// prompt), taken back by the loop when the turn is over; heard is
	// whether the turn answers the caller's words.
	flow  *flowState
	heard bool

	mu     sync.Mutex
	speech *speech    // the utterance playing or being prepared
	pin    int        // > 0 while a tool the caller must not interrupt runs (a transfer)
	node   *flow.Node // the flow node talking (nil: none)
	filler *filler    // the filler of the wait under way (nil: none)
}

// fixedLine is a turn with known words: a greeting, an apology, the
// closing line, a voicemail message. The call ends with endCause once it
// has played ("" = it goes on). A remembered line enters the model's
// history (as much of it as the caller heard).
type fixedLine struct {
	text     string
	endCause string
	remember bool
}

var errNoLLM = errors.New("no language model is configured: set --llm-base-url (PARLEY_LLM_BASE_URL)")

// startReply starts the agent's turn: the model answers the history.
func (c *conversation) startReply(ctx context.Context, lat *latency) {
	c.begin(ctx, lat, nil)
}

// speak starts a turn that says a fixed line.
func (c *conversation) speak(ctx context.Context, f fixedLine) {
	c.begin(ctx, nil, &f)
}

func (c *conversation) begin(ctx context.Context, lat *latency, f *fixedLine) {
	rctx, cancel := context.WithCancel(ctx)
	// The history is append-only: the reply reads the prefix it started
	// from in place, so a turn costs the same however long the call.
	n := len(c.history)
	r := &reply{c: c, ctx: rctx, cancel: cancel, turnID: c.turnID(), lat: lat, fixed: f, spoken: -1,
		base: c.history[:n:n], done: make(chan struct{}), flow: c.flow.clone(), heard: callerSpoke(c.history)}
	if c.flow != nil {
		r.node = c.flow.node
	}
	if lat != nil {
		lat.turnID = r.turnID
		c.timed = append(c.timed, lat)
	}
	c.reply = r
	go func() {
		defer c.wake.wake()
		defer close(r.done)
		if f != nil {
			r.sayFixed()
			return
		}
		r.converse()
	}()
}

// replyDone is the current reply's done channel (nil, never ready, when
// the agent is idle).
func (c *conversation) replyDone() <-chan struct{} {
	if c.reply == nil {
		return nil
	}
	return c.reply.done
}

// onReplied takes a finished turn into the history.
func (c *conversation) onReplied(ctx context.Context) {
	r := c.reply
	c.reply = nil
	r.cancel()
	c.history = append(c.history, r.added...)
	c.takeFlow(r)
	c.lastHeard = c.e.now() // silence counts from the end of our turn
	switch {
	case r.endCause != "":
		c.endCause = r.endCause
		return
	case errors.Is(r.failed, errNoLLM):
		c.endCause, c.failure = providerFailCause, r.failed.Error()
		return
	case r.failed != nil:
		c.e.log().Warn("model failed", "call_id", c.live.Call.ID, "err", r.failed)
		c.providerFailed(ctx, whatLLM, r.failed, "Sorry, I am having trouble right now. Please give me a moment and say that again.")
		return
	case r.mute != nil:
		c.providerFailed(ctx, whatTTS, r.mute, "Sorry, something went wrong on my side. Could you repeat that?")
		return
	case r.fixed == nil:
		delete(c.failures, whatLLM)
		delete(c.failures, whatTTS)
	default:
		delete(c.failures, whatTTS)
	}
	if len(c.queued) > 0 && !c.closing {
		for _, q := range c.queued {
			c.log.user(q.turnID, q.msg.Content, q.lang, q.said)
			c.history = append(c.history, q.msg)
		}
		c.queued = nil
		c.startReply(ctx, nil)
	}
}

// interrupt stops the agent now: its queued audio is dropped within the
// frame, and the history and transcript keep only what the caller heard.
// It returns when the audio stopped.
func (c *conversation) interrupt() time.Time {
	r := c.reply
	c.reply = nil
	r.hush() // a filler stops with the rest
	s := r.current()
	stopped := s != nil && s.stop() // false: it had already played in full
	if s != nil && !stopped {
		<-s.played // its entry is being written: let it land before any of ours
	}
	unplayed := c.audio.Flush()
	silenced := time.Now()
	r.cancel()
	<-r.done
	if stopped {
		heard := s.heard(unplayed)
		c.log.assistantHeard(s, heard)
		r.trimSpoken(heard)
	}
	c.history = append(c.history, r.added...)
	c.takeFlow(r)
	c.lastHeard = c.e.now()
	return silenced
}

// trimSpoken keeps of the interrupted message only what the caller heard
// (nothing of it: it goes, unless it called tools). Only that message: a
// reply cut before it said anything of its own leaves the history as it
// was, so an earlier reply, heard in full, is never taken for it.
func (r *reply) trimSpoken(heard string) {
	if r.spoken < 0 {
		return
	}
	if m := &r.added[r.spoken]; heard != "" || len(m.ToolCalls) > 0 {
		m.Content = heard
		return
	}
	r.added = append(r.added[:r.spoken], r.added[r.spoken+1:]...)
}

// awaitReply lets the turn under way finish (the call is ending after it).
func (c *conversation) awaitReply(ctx context.Context) {
	select {
	case <-c.reply.done:
		c.onReplied(ctx)
	case <-ctx.Done():
		c.interrupt()
	}
}

func (r *reply) current() *speech {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.speech
}

// pinned: a tool the caller must not interrupt is running.
func (r *reply) pinned() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pin > 0
}

func (r *reply) setPinned(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.pin++
	} else {
		r.pin--
	}
}

// newSpeech starts the next utterance of this turn.
func (r *reply) newSpeech() *speech {
	return r.setSpeech(newSpeech(r.ctx, r.c, r.turnID, r.lat))
}

// setSpeech makes s the utterance this turn is saying.
func (r *reply) setSpeech(s *speech) *speech {
	r.mu.Lock()
	r.speech = s
	r.mu.Unlock()
	r.spoken = -1
	return s
}

// say adds m to what this turn adds to the history, as the current
// speech's message.
func (r *reply) say(m llm.Message) {
	r.added = append(r.added, m)
	r.spoken = len(r.added) - 1
}

// sayFixed says the fixed line, synthesizing it on the reply's goroutine.
func (r *reply) sayFixed() {
	s := r.setSpeech(preparedSpeech(r.ctx, r.c, r.turnID, r.lat))
	if r.fixed.remember {
		r.say(llm.Message{Role: llm.RoleAssistant, Content: r.fixed.text})
	}
	s.add(r.fixed.text)
	s.close()
	s.synthesize() // until it has played, or is stopped
	r.mute = s.failure()
	if r.ctx.Err() == nil {
		r.endCause = r.fixed.endCause
	}
}

// maxToolRounds bounds how often the model may call tools in one turn.
const maxToolRounds = 4

// converse asks the model, speaks its answer as it streams and runs the
// tools it calls, round after round, until it answers without tools; in a
// flow, the flow's turn decides what the model is asked and whether a
// node speaks for itself.
func (r *reply) converse() {
	c := r.c
	if c.e.LLM == nil {
		r.failed = errNoLLM
		return
	}
	if r.flow != nil {
		r.lat.mark(stageLLMStart) // the flow's decisions are the model's time, not Parley's
		c.flowTurn(r.ctx, r.flow, r, r.turnID, r.heard)
		return
	}
	r.rounds(c.request, nil)
}

// rounds is the model's answer, round after round while it calls tools
// whose results it should see, each request built by req. It returns the
// flow node the model moved to with flow_transition ("": none); decided
// is called at the first words (nil: not asked).
func (r *reply) rounds(req func([]llm.Message) llm.Request, decided func()) (target string) {
	c := r.c
	for range maxToolRounds {
		s := r.newSpeech()
		var pending strings.Builder
		first := true
		r.lat.mark(stageLLMStart)
		request := req(r.messages())
		res, err := c.e.LLM.Stream(r.ctx, request, func(delta string) error {
			if first {
				first = false
				r.lat.mark(stageLLMFirstToken)
				if decided != nil {
					decided()
				}
			}
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
			if r.ctx.Err() != nil { // interrupted: the loop keeps what was heard
				if res.Text != "" {
					r.say(llm.Message{Role: llm.RoleAssistant, Content: res.Text})
				}
				return ""
			}
			s.wait(r.ctx) // what was said before the failure still plays
			r.failed = err
			return ""
		}
		msg := llm.Message{Role: llm.RoleAssistant, Content: res.Text, ToolCalls: res.ToolCalls}
		s.wait(r.ctx) // what is said before a tool call comes first
		if r.mute = s.failure(); r.mute != nil {
			return ""
		}
		if len(res.ToolCalls) == 0 || r.ctx.Err() != nil {
			if res.Text != "" {
				msg.ToolCalls = nil
				r.say(msg)
			}
			return ""
		}
		calls, moved, to := takeTransition(res.ToolCalls, offeredTargets(request))
		var results []llm.Message
		var again bool
		if fillable(calls) {
			r.waiting(func() { results, again = r.runTools(calls) })
		} else {
			results, again = r.runTools(calls)
		}
		r.say(msg)
		r.added = append(r.added, results...)
		if moved != nil {
			r.added = append(r.added, transitionResult(*moved, to))
			if to != "" && r.endCause == "" {
				return to
			}
			again = again || to == ""
		}
		if !again || r.endCause != "" || r.ctx.Err() != nil {
			return ""
		}
	}
	return ""
}

// messages is the request's history: the conversation so far, what this
// turn added, and, in automatic knowledge mode on its first round, the
// chunks retrieved for the caller's words.
func (r *reply) messages() []llm.Message {
	msgs := append(r.base[:len(r.base):len(r.base)], r.added...)
	if len(r.added) == 0 && (r.flow == nil || nodeKnowledge(r.flow.node)) && r.c.knowledgeMode() == "automatic" {
		r.waiting(func() { msgs = r.c.withKnowledge(r.ctx, r.turnID, msgs) })
	}
	return msgs
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
