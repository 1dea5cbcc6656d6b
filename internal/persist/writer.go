package persist

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// Defaults of a Writer.
const (
	// DefaultBudget bounds how long one write is retried: a database
	// failover or restart takes seconds to a minute, and a call whose end
	// cannot be written by then goes to the reaper.
	DefaultBudget = 5 * time.Minute
	// DefaultAttempt bounds one try, so a database that hangs instead of
	// refusing (a network partition) does not hold a write forever.
	DefaultAttempt = 15 * time.Second
	firstBackoff   = 100 * time.Millisecond
	maxBackoff     = 5 * time.Second
	// logEvery spaces the warnings of one write that keeps failing.
	logEvery = 30 * time.Second
)

// Writer runs writes until they land. The zero value works (no metrics,
// the default logger and budget); a nil *Writer too.
type Writer struct {
	Store   store.Store
	Logger  *slog.Logger
	Metrics *Metrics
	// Budget bounds the retries of one write (DefaultBudget when zero);
	// Attempt bounds one try (DefaultAttempt when zero).
	Budget, Attempt time.Duration
}

// permanent marks an error no retry can mend.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err, returned by a write's fn, as final: the write is not
// tried again (a refused state change, a rule the data breaks). errors.Is
// and errors.As still see err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent says whether no retry can mend err: it was marked Permanent,
// it is a store verdict on the data (no such row, a uniqueness rule), or
// the store was closed (the server is stopping).
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) ||
		errors.Is(err, store.ErrClosed)
}

// Update runs fn in a write transaction of w's store until it commits; fn
// gets the try's context, bounded by Attempt. A
// try that fails is tried again after a backoff (100 ms doubling to 5 s)
// unless its error IsPermanent; Update returns nil once a try commits, or
// the last error once fn refused for good, ctx ended, or the budget is
// spent. fn may run several times, so it must read what it writes anew
// each time, and a try whose commit failed may still have committed (the
// answer was lost): fn must tolerate finding its own write done. what
// names the write in logs and metrics ("call state", "transcript").
func (w *Writer) Update(ctx context.Context, what string, fn func(ctx context.Context, tx store.Tx) error) error {
	return w.run(ctx, what, func(ctx context.Context) error {
		return w.store().Update(ctx, func(tx store.Tx) error { return fn(ctx, tx) })
	})
}

// Do is Update for a write that is not one transaction of the store w
// holds (it calls a service that writes).
func (w *Writer) Do(ctx context.Context, what string, write func(ctx context.Context) error) error {
	return w.run(ctx, what, write)
}

func (w *Writer) run(ctx context.Context, what string, write func(ctx context.Context) error) error {
	budget, attempt := DefaultBudget, DefaultAttempt
	var m *Metrics
	log := slog.Default()
	if w != nil {
		if w.Budget > 0 {
			budget = w.Budget
		}
		if w.Attempt > 0 {
			attempt = w.Attempt
		}
		if w.Logger != nil {
			log = w.Logger
		}
		m = w.Metrics
	}
	start := time.Now()
	backoff := firstBackoff
	var lastLog time.Time
	for tries := 1; ; tries++ {
		actx, cancel := context.WithTimeout(ctx, attempt)
		err := write(actx)
		cancel()
		switch {
		case err == nil:
			if tries > 1 {
				m.retrying(what, -1)
				log.Info("write landed after retries", "write", what, "tries", tries, "after", time.Since(start).Round(time.Millisecond))
			}
			return nil
		case IsPermanent(err) || ctx.Err() != nil:
			if tries > 1 {
				m.retrying(what, -1)
			}
			return err
		case time.Since(start)+backoff > budget:
			if tries > 1 {
				m.retrying(what, -1)
			}
			m.abandon(what)
			log.Error("write abandoned: the database did not take it in time", "write", what, "tries", tries,
				"after", time.Since(start).Round(time.Millisecond), "err", err)
			return err
		}
		if tries == 1 {
			m.retrying(what, 1)
		}
		m.retry(what)
		if time.Since(lastLog) >= logEvery {
			lastLog = time.Now()
			log.Warn("write failed; retrying", "write", what, "tries", tries, "err", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			m.retrying(what, -1)
			return errors.Join(err, ctx.Err())
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

func (w *Writer) store() store.Store {
	if w == nil || w.Store == nil {
		panic("persist: Update on a Writer without a Store")
	}
	return w.Store
}
