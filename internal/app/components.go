package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// component is one part of a serving Parley. serve starts the components
// in the order serveComponents lists them and stops them in reverse, so a
// part is up before the parts that use it and stops after them.
type component struct {
	name string
	// start brings the part up and returns once it is (a port bound, a
	// loop running); work that goes on runs on the part's own goroutines.
	// ctx lives until serve returns. An error ends serve: the parts already
	// started are drained and stopped in reverse.
	start func(ctx context.Context) error
	// drain (optional) runs at shutdown's start, for every part in start
	// order before any part stops: the part takes no new work from then on
	// (a probe answers draining, SIP refuses new calls) while the work it
	// has goes on. It must not block: every part drains at once.
	drain func()
	// stop (optional) stops the part and waits for its work. ctx ends at
	// --shutdown-timeout after shutdown began; a part with its own bound
	// (live calls: --call-drain) keeps it.
	stop func(ctx context.Context) error
}

// loop runs a part that is a Run(ctx) loop on a goroutine of its own,
// with a context that halt cancels; stop halts and waits for it to return.
type loop struct {
	run    func(ctx context.Context)
	cancel context.CancelFunc
	done   chan struct{}
}

func background(run func(ctx context.Context)) *loop {
	return &loop{run: run, done: make(chan struct{})}
}

func (l *loop) start(ctx context.Context) error {
	ctx, l.cancel = context.WithCancel(ctx)
	go func() {
		defer close(l.done)
		l.run(ctx)
	}()
	return nil
}

// halt asks the loop to end, and does not wait.
func (l *loop) halt() { l.cancel() }

func (l *loop) stop(context.Context) error {
	l.cancel()
	<-l.done
	return nil
}

// runComponents starts parts in order, serves until ctx ends or failed
// reports a fatal error, then drains every started part and stops them in
// reverse. It returns the start error, the failure, or the stop errors.
func runComponents(ctx context.Context, parts []component, failed <-chan error, shutdownTimeout time.Duration, log *slog.Logger) error {
	base := context.WithoutCancel(ctx) // the parts outlive the signal: they stop in order
	var (
		started []component
		err     error
	)
	for _, p := range parts {
		if e := p.start(base); e != nil {
			err = fmt.Errorf("%s: %w", p.name, e)
			break
		}
		started = append(started, p)
	}
	if err == nil {
		select {
		case <-ctx.Done():
		case e := <-failed:
			err = e
		}
	}
	if err == nil {
		log.Info("shutting down: draining", "timeout", shutdownTimeout.String())
	}
	for _, p := range started {
		if p.drain != nil {
			p.drain()
		}
	}
	shutdown, cancel := context.WithTimeout(base, shutdownTimeout)
	defer cancel()
	errs := []error{err}
	for i := len(started) - 1; i >= 0; i-- {
		p := started[i]
		if p.stop == nil {
			continue
		}
		log.Debug("stopping", "component", p.name)
		if e := p.stop(shutdown); e != nil {
			log.Warn("stop", "component", p.name, "err", e)
			errs = append(errs, fmt.Errorf("stop %s: %w", p.name, e))
		}
	}
	return errors.Join(errs...)
}
