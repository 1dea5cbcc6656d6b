package eval

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// Calls places and cancels the attempts' calls: the call queue.
type Calls interface {
	Place(ctx context.Context, c *model.Call, skipQueue bool) error
	Cancel(ctx context.Context, orgID, id string) (model.Call, error)
}

// Chats runs text-only conversations: the conversation engine.
type Chats interface {
	Chat(ctx context.Context, c pipeline.Chat) (pipeline.ChatResult, error)
}

// Deliverer sends one webhook: webhook.Sender.
type Deliverer interface {
	Deliver(ctx context.Context, d webhook.Delivery) webhook.Result
}

// Runner drives test runs: the runs this server holds the lease of, its
// own after a restart, and any whose server stopped renewing. One
// goroutine per run (drive) starts its attempts up to the run's
// parallelism; each attempt is one goroutine that places the call (or
// holds the text conversation), waits for it to end, asks the judge, and
// records the verdict. Every record a drive writes it holds for update
// first, and a final attempt or run is never written again, so a cancel
// from the API and a finishing attempt cannot overwrite each other.
type Runner struct {
	Store store.Store
	// Calls places the attempts' calls; nil: call mode is refused (the
	// server has no telephony: --dialer other than sip).
	Calls Calls
	// Chats holds text-only conversations; nil: text mode is refused.
	Chats Chats
	// Judge scores attempts; its LLM nil: runs are refused, naming the
	// setting.
	Judge Judge
	// Webhooks delivers test_run.completed, signed with Secret's answer.
	Webhooks Deliverer
	Secret   func(ctx context.Context, orgID string) (string, error)
	// Node names this server among those sharing the database; LeaseTTL is
	// how long a run stays this server's without renewal.
	Node     string
	LeaseTTL time.Duration
	// ReclaimAll takes every running run at start (SQLite: one server).
	ReclaimAll bool
	// Poll is how often an attempt looks at its calls (default 250 ms).
	Poll time.Duration
	// Writes lands the runs' writes (an attempt's start and end, a run's
	// end, a webhook's status): one the database does not take is retried
	// while this server drives the run. Default: a Writer over Store.
	Writes *persist.Writer
	Logger *slog.Logger

	once     sync.Once
	wake     chan struct{}
	mu       sync.Mutex
	driving  map[string]bool // runs with a drive goroutine here
	inFlight map[string]bool // runs whose test_run.completed is being sent
	sends    sync.WaitGroup  // webhook deliveries
	base     context.Context // Run's context, for deliveries started outside it (under mu)
	// statusWrites is the context of the deliveries' status writes,
	// canceled once shutdown gives up waiting for them (persist.ShutdownGrace).
	statusWrites context.Context
	haltStatus   context.CancelFunc
}

// Errors a run start is refused with.
var (
	errNoModel = &UnavailableError{Message: "test runs and generation need a language model and none is configured: set --llm-base-url (PARLEY_LLM_BASE_URL)"}
	errNoCalls = &invalid.Conflict{Message: "call-mode runs place real calls and this server has no telephony (--dialer sip): use mode text"}
	errNoText  = &invalid.Conflict{Message: "text-mode runs need the conversation engine, which this server does not run"}
)

func (r *Runner) init() {
	r.once.Do(func() {
		r.wake = make(chan struct{}, 1)
		r.driving, r.inFlight = map[string]bool{}, map[string]bool{}
		if r.LeaseTTL <= 0 {
			r.LeaseTTL = 30 * time.Second
		}
		if r.Poll <= 0 {
			r.Poll = 250 * time.Millisecond
		}
		if r.Logger == nil {
			r.Logger = slog.Default()
		}
		if r.Writes == nil {
			r.Writes = &persist.Writer{Store: r.Store, Logger: r.Logger}
		}
		r.statusWrites, r.haltStatus = context.WithCancel(context.Background())
	})
}

// canRun says why a run in mode cannot start here (nil: it can).
func (r *Runner) canRun(mode string) error {
	switch {
	case r == nil || r.Judge.LLM == nil:
		return errNoModel
	case mode == model.TestModeCall && r.Calls == nil:
		return errNoCalls
	case mode == model.TestModeText && r.Chats == nil:
		return errNoText
	}
	return nil
}

// claim makes this server the run's driver.
func (r *Runner) claim(run *model.TestRun, now time.Time) {
	r.init()
	until := now.Add(r.LeaseTTL)
	run.LeaseOwner, run.LeaseExpiresAt = &r.Node, &until
}

// Wake makes Run look for runs to drive now.
func (r *Runner) Wake() {
	if r == nil {
		return
	}
	r.init()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run drives runs until ctx ends, then waits for its drives and
// deliveries. Attempts under way when it stops stay running; the next
// server to drive the run finds out from their calls how they ended.
func (r *Runner) Run(ctx context.Context) {
	r.init()
	r.mu.Lock()
	r.base = ctx
	r.mu.Unlock()
	var drives sync.WaitGroup
	defer func() {
		drives.Wait()
		r.awaitSends()
	}()
	renew := time.NewTicker(r.LeaseTTL / 3)
	defer renew.Stop()
	look := time.NewTicker(r.LeaseTTL / 3)
	defer look.Stop()
	first := true
	for {
		now := time.Now()
		if first && r.ReclaimAll {
			now = now.Add(100 * 365 * 24 * time.Hour) // every lease counts as lapsed
		}
		first = false
		for _, run := range r.take(ctx, now) {
			drives.Add(1)
			go func() {
				defer drives.Done()
				r.drive(ctx, run)
			}()
		}
		r.sweepWebhooks(ctx)
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			r.renew(ctx)
		case <-look.C:
		case <-r.wake:
		}
	}
}

// awaitSends waits for the webhook deliveries under way, halting their
// status writes that the database does not take after
// persist.ShutdownGrace.
func (r *Runner) awaitSends() {
	if persist.AwaitOrHalt(r.sends.Wait, r.haltStatus) {
		r.Logger.Warn("shutdown: the database did not take test_run.completed statuses; the next start sends those webhooks again")
	}
}

// update runs fn in a write transaction until it commits, retrying (with
// backoff, bounded by the Writer's budget) while the database does not
// take it; fn gets each try's context. what names the write in logs and
// metrics.
func (r *Runner) update(ctx context.Context, what string, fn func(ctx context.Context, tx store.Tx) error) error {
	return r.Writes.Do(ctx, what, func(ctx context.Context) error {
		return r.Store.Update(ctx, func(tx store.Tx) error { return fn(ctx, tx) })
	})
}

// take claims the runs this server should drive and is not driving yet.
func (r *Runner) take(ctx context.Context, now time.Time) []model.TestRun {
	var out []model.TestRun
	err := r.Store.Update(ctx, func(tx store.Tx) error {
		runs, err := tx.RunsToDrive(ctx, r.Node, now, 100)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, run := range runs {
			if r.isDriving(run.ID) {
				continue
			}
			r.claim(&run, time.Now())
			if err := tx.UpdateTestRun(ctx, &run); err != nil {
				return err
			}
			out = append(out, run)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			r.Logger.Error("test runs: find runs to drive", "err", err)
		}
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, run := range out {
		r.driving[run.ID] = true
	}
	return out
}

func (r *Runner) isDriving(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.driving[id]
}

// renew extends the leases of the runs this server drives, and of no
// other: a run it holds but no longer drives (its end could not be
// written) lapses, and take picks it up again. A renewal the database
// does not take is tried again at the next tick, well within the lease.
func (r *Runner) renew(ctx context.Context) {
	ids := r.drivingIDs()
	err := r.Store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.RenewTestRunLeases(ctx, r.Node, ids, time.Now().Add(r.LeaseTTL))
		return err
	})
	if err != nil && ctx.Err() == nil {
		r.Logger.Error("test runs: renew leases", "err", err)
	}
}

// drivingIDs are the runs with a drive goroutine here, now.
func (r *Runner) drivingIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.driving))
	for id := range r.driving {
		ids = append(ids, id)
	}
	return ids
}

// parallelism is how many attempts of a run go at once: as many as the
// organization's lines allow (a call-mode attempt holds two), so a run
// never queues more calls than can be answered and normal calls keep
// their place in the queue beside it.
func (r *Runner) parallelism(ctx context.Context, run model.TestRun) int {
	o, err := store.Read(ctx, r.Store, func(tx store.Tx) (model.Organization, error) { return tx.GetOrg(ctx, run.OrgID) })
	if err != nil {
		return 1
	}
	n := o.ConcurrencyLimit
	if run.Mode == model.TestModeCall {
		n /= 2
	}
	return max(1, min(n, 10))
}

// drive runs a run's attempts until every one is over, then completes
// the run. It returns early when the run ends elsewhere (canceled) once
// its attempts have returned, or when ctx ends.
func (r *Runner) drive(ctx context.Context, run model.TestRun) {
	retake := false
	defer func() {
		r.mu.Lock()
		delete(r.driving, run.ID)
		r.mu.Unlock()
		if retake {
			r.Wake()
		}
	}()
	log := r.Logger.With("test_run_id", run.ID, "org_id", run.OrgID)
	done := make(chan string) // attempt ids, sent by the attempts' goroutines; never closed
	inflight := map[string]bool{}
	defer func() {
		for len(inflight) > 0 {
			delete(inflight, <-done)
		}
	}()
	// A text attempt's conversation lives in its goroutine: when the run
	// ends under it (canceled), it stops talking to the model at once, and
	// its attempt, already final, is not written. A call attempt goes on
	// until its calls end (the cancel hung them up) to delete its caller.
	actx := ctx
	if run.Mode == model.TestModeText {
		var stop context.CancelFunc
		actx, stop = context.WithCancel(ctx)
		defer stop() // before the wait above
	}
	tick := time.NewTicker(r.Poll * 4)
	defer tick.Stop()
	for {
		cur, err := store.Read(ctx, r.Store, func(tx store.Tx) (model.TestRun, error) {
			return tx.GetTestRun(ctx, run.OrgID, run.SuiteID, run.ID, true)
		})
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, store.ErrNotFound):
			return // the suite was deleted
		case err != nil:
			log.Error("test run: read", "err", err)
		case cur.Status != model.TestRunRunning:
			return // canceled: the deferred wait lets its attempts clean up
		case len(inflight) == 0 && allFinal(cur.Attempts):
			// An end not written in time lets the run go: its lease is no
			// longer renewed, and take finds it again.
			retake = !r.complete(ctx, cur) && ctx.Err() == nil
			return
		default:
			par := r.parallelism(ctx, cur)
			for _, a := range cur.Attempts {
				if len(inflight) >= par {
					break
				}
				if a.Final() || inflight[a.ID] {
					continue
				}
				inflight[a.ID] = true
				go func() {
					r.attempt(actx, cur, a)
					done <- a.ID
				}()
			}
		}
		select {
		case <-ctx.Done():
			return
		case id := <-done:
			delete(inflight, id)
		case <-tick.C:
		}
	}
}

func allFinal(attempts []model.TestAttempt) bool {
	for _, a := range attempts {
		if !a.Final() {
			return false
		}
	}
	return true
}

// complete ends a run whose attempts are all over and sends
// test_run.completed. It says whether the run's end is written (by it or
// elsewhere); false leaves the run running, for take to drive again.
func (r *Runner) complete(ctx context.Context, run model.TestRun) bool {
	var ended model.TestRun
	tries := 0
	err := r.update(ctx, "test run end", func(ctx context.Context, tx store.Tx) (err error) {
		tries++
		if ended, err = tx.GetTestRunForUpdate(ctx, run.OrgID, run.ID); err != nil {
			return err
		}
		if tries > 1 && ended.Status == model.TestRunCompleted {
			return nil // an earlier try committed; its answer was lost
		}
		if ended.Status != model.TestRunRunning || !allFinal(ended.Attempts) {
			ended = model.TestRun{}
			return nil
		}
		return r.end(ctx, tx, &ended, model.TestRunCompleted, "", model.Now())
	})
	if errors.Is(err, store.ErrNotFound) {
		return true // the suite was deleted
	}
	if err != nil {
		if ctx.Err() == nil {
			r.Logger.Error("test run: complete", "test_run_id", run.ID, "err", err)
		}
		return false
	}
	if ended.ID != "" {
		r.logFinished(ended)
		r.deliver(ended)
	}
	return true
}

// end writes a run's end in tx: its status, counters, and where
// test_run.completed goes (the agent's postCallWebhookUrl, if it still
// has one), which the outbox then delivers.
func (r *Runner) end(ctx context.Context, tx store.Tx, run *model.TestRun, status, reason string, now time.Time) error {
	run.Status, run.CompletedAt, run.UpdatedAt = status, &now, now
	if reason != "" {
		run.ErrorMessage = &reason
	}
	run.LeaseOwner, run.LeaseExpiresAt = nil, nil
	counts(run)
	a, err := tx.GetAgent(ctx, run.OrgID, run.AgentID)
	switch {
	case err == nil:
		run.WebhookURL = a.Config.PostCallWebhookURL
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	return tx.UpdateTestRun(ctx, run)
}
