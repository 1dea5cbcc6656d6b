package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/provider/tts"
	"github.com/parley-voice/parley/internal/telephony"
)

// chattyLLM streams sentence after sentence as fast as it can, until the
// request is canceled or it has said n of them; a summary request (no
// tools) gets one sentence.
type chattyLLM struct{ n int }

func (l chattyLLM) Stream(ctx context.Context, r llm.Request, onText func(string) error) (llm.Result, error) {
	if len(r.Tools) == 0 {
		return llm.Result{Text: "A short call."}, nil
	}
	var text string
	for i := range l.n {
		if err := ctx.Err(); err != nil {
			return llm.Result{Text: text}, err
		}
		s := fmt.Sprintf("Sentence number %d. ", i)
		if err := onText(s); err != nil {
			return llm.Result{Text: text}, err
		}
		text += s
		runtime.Gosched()
	}
	return llm.Result{Text: text, FinishReason: "stop"}, nil
}

// instantTTS answers each sentence at once with 20 ms of tone.
type instantTTS struct{}

func (instantTTS) Synthesize(ctx context.Context, r tts.Request, rate int, out func([]int16) error) (tts.Stats, error) {
	if err := out(audio.Tone(220, rate, 20*time.Millisecond, 0.3)); err != nil {
		return tts.Stats{}, err
	}
	return tts.Stats{Characters: len(r.Text), Audio: 20 * time.Millisecond}, nil
}

// TestBargeInAndHangupRaceTheReply stops replies while the model is still
// streaming sentences into them, by barge-in and by the call ending, with
// the reply at every stage from its first sentence to its last. A stop that
// closed the speech's sentence queue under the reply goroutine panicked
// here ("send on closed channel") within a few iterations; under -race the
// test also checks that nothing they share is touched unguarded.
func TestBargeInAndHangupRaceTheReply(t *testing.T) {
	const iterations = 1200
	b := newBench(t)
	e := &Engine{LLM: chattyLLM{n: 40}, TTS: instantTTS{}, Store: b.st}
	for i := range iterations {
		sess := newFakeSessionTick(time.Millisecond)
		live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
		live.PostCallBudget = time.Second
		c := newConversation(e, live, nil)
		ctx, cancel := context.WithCancel(context.Background())
		c.startReply(ctx, nil)
		// Let the reply get somewhere between nowhere and its end.
		for range i % 23 {
			runtime.Gosched()
		}
		if i%5 == 4 {
			time.Sleep(time.Duration(i%7) * 200 * time.Microsecond)
		}
		switch i % 3 {
		case 0: // the caller barges in, then hangs up
			c.interrupt()
			sess.hangup()
			cancel()
			c.finish(ctx)
		case 1: // the leg ends under the reply
			sess.hangup()
			cancel()
			c.finish(ctx)
		case 2: // the agent ends the call while its reply streams
			c.endCause = "END_CALL_TOOL"
			cancel()
			c.finish(ctx)
		}
		cancel()
		if c.reply != nil {
			t.Fatalf("iteration %d: a reply is still running after finish", i)
		}
		sess.hangup()
	}
}

// llmFunc is an in-process llm.Client.
type llmFunc func(ctx context.Context, r llm.Request, onText func(string) error) (llm.Result, error)

func (f llmFunc) Stream(ctx context.Context, r llm.Request, onText func(string) error) (llm.Result, error) {
	return f(ctx, r, onText)
}

// TestInterruptionKeepsTheHeardReply is the case agent-to-agent calls hit
// five times in six: the agent's reply plays in full, the caller speaks,
// and the caller cuts the next reply off before the model has said
// anything. Only the cut reply may be trimmed: the one heard in full stays
// in the history, or the agent says it again.
func TestInterruptionKeepsTheHeardReply(t *testing.T) {
	const heard = "We open at nine."
	for _, tc := range []struct {
		name  string
		model bool // the model is asked: cut it once it is thinking
		cut   func(c *conversation, ctx context.Context)
	}{
		{"a model reply cut before its first word", true, func(c *conversation, ctx context.Context) { c.startReply(ctx, nil) }},
		{"an apology cut before it played", false, func(c *conversation, ctx context.Context) {
			c.speak(ctx, fixedLine{text: "Sorry, I didn't catch that. Could you say it again?"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t)
			started := make(chan struct{}, 1)
			var last []llm.Message
			model := llmFunc(func(ctx context.Context, r llm.Request, onText func(string) error) (llm.Result, error) {
				last = r.Messages
				switch r.Messages[len(r.Messages)-1].Content {
				case "When do you open?": // answered in full
					if err := onText(heard); err != nil {
						return llm.Result{}, err
					}
					return llm.Result{Text: heard}, nil
				case "And on Sunday?": // thinking until the caller cuts in
					started <- struct{}{}
					<-ctx.Done()
					return llm.Result{}, ctx.Err()
				}
				return llm.Result{Text: "Anything else?"}, nil
			})
			sess := newFakeSessionTick(time.Millisecond)
			defer sess.hangup()
			live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
			e := &Engine{LLM: model, TTS: instantTTS{}, Store: b.st}
			c := newConversation(e, live, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			c.history = append(c.history, llm.Message{Role: llm.RoleUser, Content: "When do you open?"})
			c.startReply(ctx, nil)
			<-c.reply.done // played in full
			c.onReplied(ctx)

			c.history = append(c.history, llm.Message{Role: llm.RoleUser, Content: "And on Sunday?"})
			tc.cut(c, ctx)
			if tc.model {
				<-started
			}
			c.interrupt()

			c.history = append(c.history, llm.Message{Role: llm.RoleUser, Content: "Hello?"})
			c.startReply(ctx, nil)
			<-c.reply.done
			c.onReplied(ctx)
			var said []string
			for _, m := range last {
				if m.Role == llm.RoleAssistant {
					said = append(said, m.Content)
				}
			}
			if len(said) != 1 || said[0] != heard {
				t.Fatalf("the model's history holds the agent saying %q; want only %q", said, heard)
			}
		})
	}
}
