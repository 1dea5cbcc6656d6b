package pipeline

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// wordsSTT is a streaming recognizer whose streams say their words as
// they come (stt.Partial), as stt/sphinx's and Deepgram's do: utterance i
// has scripts[i] (the last script again for any after it). Its streams
// record the audio written, so a test measures an utterance, trailing
// silence included, in frames of the session.
type wordsSTT struct {
	scripts []wordsScript

	mu      sync.Mutex
	streams []*wordsStream
	changed chan struct{} // closed and replaced whenever a stream opens or closes
}

// wordsScript is one utterance: the partial text its stream says once it
// has n samples (the last entry whose n was reached; "" before any), and
// the final text.
type wordsScript struct {
	partials []partialAt
	final    string
}

type partialAt struct {
	n    int
	text string
}

// saying is a script whose partial text is text from the start, and final.
func saying(text, final string) wordsScript {
	return wordsScript{partials: []partialAt{{0, text}}, final: final}
}

func newWordsSTT(scripts ...wordsScript) *wordsSTT {
	return &wordsSTT{scripts: scripts, changed: make(chan struct{})}
}

var _ stt.Streamer = (*wordsSTT)(nil)

func (s *wordsSTT) Transcribe(ctx context.Context, pcm []int16, rate int, language string) (stt.Result, error) {
	return stt.Result{}, errors.New("wordsSTT streams only")
}

func (s *wordsSTT) Open(ctx context.Context, rate int, language string) (stt.Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scripts[min(len(s.streams), len(s.scripts)-1)]
	st := &wordsStream{rec: s, script: sc, rate: rate}
	s.streams = append(s.streams, st)
	s.signal()
	return st, nil
}

// signal wakes the waiters; s.mu held.
func (s *wordsSTT) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// closed waits until utterance i's stream is closed and returns the
// samples written to it.
func (s *wordsSTT) closed(t *testing.T, i int) int {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		s.mu.Lock()
		ch := s.changed
		if i < len(s.streams) && s.streams[i].done {
			n := s.streams[i].written
			s.mu.Unlock()
			return n
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("utterance %d was never closed (%d streams)", i, s.opened())
		}
	}
}

// opened is how many streams were opened.
func (s *wordsSTT) opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}

type wordsStream struct {
	rec    *wordsSTT
	script wordsScript
	rate   int

	// Guarded by rec.mu.
	written int
	done    bool
}

func (w *wordsStream) Write(pcm []int16) error {
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	w.written += len(pcm)
	return nil
}

func (w *wordsStream) Partial() string {
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	text := ""
	for _, p := range w.script.partials {
		if w.written >= p.n {
			text = p.text
		}
	}
	return text
}

func (w *wordsStream) Close() (stt.Result, error) {
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	w.done = true
	w.rec.signal()
	return stt.Result{Text: w.script.final, Language: "en", Audio: stt.Duration(w.written, w.rate)}, nil
}
