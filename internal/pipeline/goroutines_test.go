package pipeline

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/telephony"
)

// TestGoroutinesPerCall counts the goroutines a call's engine keeps while
// the agent and the caller are quiet: none but the one that runs it (the
// line's), which reads the caller's audio itself. Transcriptions, replies
// and transcript writes each have a goroutine only while under way.
func TestGoroutinesPerCall(t *testing.T) {
	b := newBench(t)
	e := &Engine{LLM: delayedLLM{"Certainly."}, STT: &scriptedSTT{}, TTS: instantTTS{}, Store: b.st}
	sess := newFakeSession()
	defer sess.hangup()
	base := runtime.NumGoroutine() // the session's clock included
	live := telephony.NewLive(b.call, b.agent, sess, func(string) { sess.hangup() })
	done := make(chan struct{})
	go func() { e.Run(context.Background(), live); close(done) }()
	defer func() { sess.hangup(); <-done }()

	b.waitEntries(t, 1) // the greeting played and was written
	const want = 1      // the goroutine running the conversation
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine()-base > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines for an idle call, want %d:\n%s", runtime.NumGoroutine()-base, want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
