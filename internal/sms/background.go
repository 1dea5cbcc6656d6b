package sms

import (
	"context"
	"log/slog"
	"sync"
)

// background runs the work that follows a carrier's webhook once the
// carrier has its answer (forwarding and replying to inbound messages).
// Close cancels what runs and waits for it.
type background struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	closed bool
	wg     sync.WaitGroup
}

// background runs f on its own goroutine, unless Close has been called.
func (s *Messages) background(f func(ctx context.Context)) {
	b := &s.bg
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if b.ctx == nil {
		b.ctx, b.cancel = context.WithCancel(context.Background())
	}
	b.wg.Go(func() { f(b.ctx) })
}

// Close stops inbound work under way and waits for it; later inbound
// messages are recorded but not forwarded or answered. A reply cut off
// here is not retried: the inbound message stays, unanswered.
func (s *Messages) Close() {
	b := &s.bg
	b.mu.Lock()
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// Wait waits for the inbound work under way (with nothing starting more:
// tests, Drain).
func (s *Messages) Wait() { s.bg.wg.Wait() }

// Drain waits for the inbound work under way until ctx ends, then stops
// it (Close): replies about to go out get to go, and those cut off stay
// owed for the next server's sweep. Call it once nothing starts new work
// (the HTTP server and Run have stopped), as Wait must not race a start.
func (s *Messages) Drain(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.Close()
}

func (s *Messages) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}
