package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/store/storefault"
	"github.com/parley-voice/parley/internal/telephony"
)

// TestTranscriptSurvivesFaults: a batch of entries the database refuses a
// few times (busy, a full disk) lands once it takes it, and the entries
// made meanwhile land after it, in the order they were made; a batch whose
// answer was lost after it committed is not written twice.
func TestTranscriptSurvivesFaults(t *testing.T) {
	for _, r := range []storefault.Rule{
		{Op: "AppendTranscript", Times: 3, Err: storefault.Busy},
		{Op: "AppendTranscript", Times: 2, Err: storefault.DiskFull},
		{Op: "AppendTranscript", Times: 1, Err: storefault.Refused, LoseAck: true},
	} {
		t.Run(fmt.Sprintf("%v lost answer %v", r.Err, r.LoseAck), func(t *testing.T) {
			b := newBench(t)
			fs := storefault.Wrap(b.st)
			fs.Inject(r)
			log := &transcriptLog{t: call.NewTranscript(fs, b.call, time.Now()), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			log.user("t1", "first", "en", span{})
			waitFor(t, "the first batch refused", func() bool { return fs.Fails("AppendTranscript") >= 1 })
			log.assistant("t1", "second", time.Time{})
			log.user("t2", "third", "en", span{})
			log.flush()
			var got []string
			for i, e := range b.stored(t).Transcript {
				got = append(got, fmt.Sprintf("%v:%v", e["seq"], e["text"]))
				if e["seq"] != float64(i) {
					t.Errorf("entry %d has seq %v", i, e["seq"])
				}
			}
			if want := "[0:first 1:second 2:third]"; fmt.Sprint(got) != want {
				t.Errorf("transcript %v, want %s", got, want)
			}
			if n := fs.Fails("AppendTranscript"); n != r.Times {
				t.Errorf("the fault struck %d times, want %d", n, r.Times)
			}
		})
	}
}

// TestEntriesBeginWhenTheLineBegan: a message's "at" is when it began,
// where the recording plays it from (the greeting's first audio on the
// line, the caller's first word), and its "endAt" when it ended (the
// greeting played out, the caller's last word): "at" once stamped the
// entry's making, after the line, and the dashboard's click-to-play
// started after it.
func TestEntriesBeginWhenTheLineBegan(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	b := newBench(t)
	m := llmtest.New(t, func(req llmtest.Request) llmtest.Reply {
		if len(req.Tools) == 0 { // the post-call summary
			return llmtest.Reply{Text: []string{"A table for two."}}
		}
		return llmtest.Reply{Text: []string{"Booked. Goodbye!"}, ToolCalls: []llmtest.ToolCallReply{{ID: "call_1", Name: "end_call", Arguments: "{}"}}}
	})
	e := &Engine{LLM: openai.New(openai.Config{BaseURL: m.URL, APIKey: "k", Model: "m"}), STT: &scriptedSTT{texts: []string{"A table for two tonight"}},
		TTS: newEspeak(), Store: b.st}
	sess := newFakeSession()
	defer sess.hangup()
	live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
	done := make(chan struct{})
	var out call.Outcome
	go func() { out = e.Run(context.Background(), live); close(done) }()

	b.waitEntries(t, 1)
	words := callerSays(t, "A table for two tonight, please.")
	said := time.Now()
	sess.say(words)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not end")
	}
	c := b.ended(t, out)
	since := func(at time.Time) float64 { return at.Sub(*b.call.StartedAt).Seconds() }
	span := func(e map[string]any) (at, end float64) {
		t.Helper()
		at, ok1 := e["at"].(float64)
		end, ok2 := e["endAt"].(float64)
		if !ok1 || !ok2 || at > end {
			t.Fatalf("entry %v: at %v endAt %v", e["text"], e["at"], e["endAt"])
		}
		return at, end
	}
	if len(c.Transcript) < 3 {
		t.Fatalf("transcript %v", c.Transcript)
	}
	greeting, user := c.Transcript[0], c.Transcript[1]
	if greeting["role"] != "assistant" || user["role"] != "user" {
		t.Fatalf("transcript %v", c.Transcript)
	}

	// The greeting: from its first audio (written to the line at most a
	// frame before the line played it) to its end, after it played out.
	sess.mu.Lock()
	firstOut := sess.firstOut
	sess.mu.Unlock()
	at, end := span(greeting)
	if d := since(firstOut) - at; d < -0.005 || d > 0.1 {
		t.Errorf("greeting at %.3f s, its first audio played at %.3f s", at, since(firstOut))
	}
	if end-at < 1 {
		t.Errorf("greeting from %.3f to %.3f s: it took over a second to play", at, end)
	}

	// The caller: from their first word to their last, within their
	// audio (queued at said, espeak's lead-in and tail of silence
	// around the words), not when the turn's silence ended it. A frame is
	// stamped when it arrives, the end of its 20 ms, and a loaded
	// machine's ticker bunches frames: "at" may come a little before said.
	at, end = span(user)
	spoken := float64(len(words)) / Rate
	if d := at - since(said); d < -0.1 || d > 0.5 {
		t.Errorf("the caller's line at %.3f s, their audio began at %.3f s", at, since(said))
	}
	if end > since(said)+spoken+0.1 || end-at < spoken*0.6 {
		t.Errorf("the caller's line from %.3f to %.3f s; their %.2f s of audio from %.3f s", at, end, spoken, since(said))
	}
	// The messages in turn, one line after the other (a tool may run
	// while the agent speaks).
	last := 0.0
	for i, e := range c.Transcript {
		if e["type"] != "message" {
			continue
		}
		at, end := span(e)
		if at < last-0.001 {
			t.Errorf("entry %d begins at %.3f, before the one before it ended (%.3f)", i, at, last)
		}
		last = end
	}
}
