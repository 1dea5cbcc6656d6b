package callqueue

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store"
)

// ErrConcurrencyLimit: skipQueue was asked while every line is taken.
var ErrConcurrencyLimit = errors.New("the organization's concurrency limit is reached")

// ErrDraining: the server is shutting down and admits no call; another
// server, or this one once restarted, will.
var ErrDraining = errors.New("the server is shutting down")

// PostCaller delivers post-call webhooks (package webhook).
type PostCaller interface {
	// PostCall delivers body to url once and says "sent", "failed" or "skipped".
	PostCall(ctx context.Context, url, secret string, body []byte) string
}

// Options configure a Queue.
type Options struct {
	Store  store.Store
	Dialer call.Dialer
	// Webhooks delivers post-call webhooks; Secret finds an organization's
	// signing secret ("" for none).
	Webhooks PostCaller
	Secret   func(ctx context.Context, orgID string) (string, error)
	// Node names this server; it owns the leases of the calls it runs. It
	// must be stable across restarts of the same server and unique among
	// servers sharing a database.
	Node string
	// ReclaimAllOnStart ends every live call found at start as
	// SERVER_RESTART: right for an embedded database only one server uses.
	ReclaimAllOnStart bool
	// LeaseTTL is how long a lease lasts without renewal (default 30s).
	LeaseTTL time.Duration
	// Poll is how often queued calls are looked for when nothing woke the
	// dispatcher (default 1s). Calls ending here wake it; on PostgreSQL,
	// calls ending on other servers wake it through LISTEN/NOTIFY
	// (store.Store.WatchLines), and Poll is the fallback.
	Poll time.Duration
	// Drain is how long live calls may go on after shutdown starts before
	// they are hung up (default 30s).
	Drain time.Duration
	// Writes lands the call plane's state changes: a change the database
	// does not take is retried (persist.DefaultBudget) while the call is
	// held by its worker. Default: a Writer over Store.
	Writes  *persist.Writer
	Logger  *slog.Logger
	Metrics *Metrics
	// LineFreed, when set, is called whenever a call this server ends
	// stops holding a line (its worker's end, the reaper, a cancel):
	// campaigns' dispatcher dials again at once instead of at its next
	// tick.
	LineFreed func()
}

// Queue is the call plane of one server.
type Queue struct {
	o    Options
	wake chan struct{}
	// orphaned asks the reaper to look now: a worker gave up a call whose
	// change the database did not take.
	orphaned chan struct{}

	mu      sync.Mutex
	running map[string]*worker // by call id
	// admitting are calls being admitted here, in a transaction that may
	// commit before their worker starts: the reaper must not take them for
	// calls this server holds but does not run.
	admitting map[string]bool
	inFlight  map[string]bool // post-call deliveries under way
	// healthySince is when the heartbeat last found the database after
	// failing to (zero while it fails): the reaper takes other servers'
	// lapsed leases only a whole lease after it, since they could not
	// renew while nobody could reach the database.
	healthySince time.Time
	base         context.Context // canceled when live calls must stop
	stop         context.CancelFunc
	// writes is canceled once shutdown gives up waiting for state writes
	// the database does not take: those calls go to the next start's reaper.
	writes     context.Context
	haltWrites context.CancelFunc
	workers    sync.WaitGroup
	sends      sync.WaitGroup
	// recovered is closed once Run has ended what a previous run left
	// live: until then no call is admitted, or the startup reaper, which
	// takes every live call it finds for a dead one, could end it.
	recovered chan struct{}
	// admissions is held (read) by Place and Answer from their check of
	// closing to the start of their worker, and taken by shutdown to set
	// closing: after that no worker starts, and waiting for workers is safe.
	admissions sync.RWMutex
	closing    bool
	// draining: Drain was called; no call starts here any more (drain.go).
	draining atomic.Bool
	// placements are the organizations whose admissions are under way,
	// with the Place calls waiting for the next batch (see place).
	placeMu    sync.Mutex
	placements map[string]*placements
}

// New returns a Queue; Run starts it.
func New(o Options) *Queue {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Drain <= 0 {
		o.Drain = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.Writes == nil {
		o.Writes = &persist.Writer{Store: o.Store, Logger: o.Logger}
	}
	base, stop := context.WithCancel(context.Background())
	writes, haltWrites := context.WithCancel(context.Background())
	return &Queue{
		o: o, wake: make(chan struct{}, 1), orphaned: make(chan struct{}, 1), running: map[string]*worker{}, admitting: map[string]bool{}, inFlight: map[string]bool{}, placements: map[string]*placements{},
		base: base, stop: stop, writes: writes, haltWrites: haltWrites, recovered: make(chan struct{}),
	}
}

// Wake asks the dispatcher to look at the queue now.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// freed wakes the dispatcher, and LineFreed's listener, once a line is
// free.
func (q *Queue) freed() {
	q.Wake()
	if q.o.LineFreed != nil {
		q.o.LineFreed()
	}
}

// Place stores a new call, admitted (INITIATED) when a line is free and no
// call of the organization waits ahead of it, queued (QUEUED) otherwise.
// With skipQueue the call jumps the queue, and when every line is taken it
// is refused with ErrConcurrencyLimit and nothing is stored. The decision
// and the insert are one transaction under the organization's lock, so
// concurrent requests never admit more calls than the limit; requests that
// arrive while one is being decided are decided together, in one
// transaction (placement.go). A call that
// ReservesLine needs two free lines: its own and its far end's.
func (q *Queue) Place(ctx context.Context, c *model.Call, skipQueue bool) error {
	return q.PlaceRecorded(ctx, c, skipQueue, nil)
}

// PlaceRecorded is Place with record run in the transaction that stores
// the call, after it (an API request's Idempotency-Key): its error undoes
// the call and is returned.
func (q *Queue) PlaceRecorded(ctx context.Context, c *model.Call, skipQueue bool, record func(store.Tx, model.Call) error) error {
	if err := q.awaitRecovery(ctx); err != nil {
		return err
	}
	q.admissions.RLock()
	defer q.admissions.RUnlock()
	if q.closing {
		return ErrDraining
	}
	now := model.Now()
	c.Status, c.CreatedAt, c.UpdatedAt = model.CallQueued, now, now
	p := &placing{ctx: ctx, c: c, skipQueue: skipQueue, record: record, done: make(chan struct{}), lead: make(chan []*placing, 1)}
	q.place(p)
	err, admitted := p.err, p.admitted
	if err != nil || !admitted {
		q.unclaim(c.ID)
	}
	switch {
	case errors.Is(err, ErrConcurrencyLimit):
		q.o.Metrics.placed.WithLabelValues("rejected").Inc()
		return err
	case err != nil:
		return err
	case admitted:
		q.o.Metrics.placed.WithLabelValues("admitted").Inc()
		q.logPlaced(*c)
		q.start(*c, nil)
	default:
		q.o.Metrics.placed.WithLabelValues("queued").Inc()
		q.logPlaced(*c)
		q.Wake()
	}
	return nil
}

// Connect rings, answers and returns the line of a call whose other end
// this server already holds (an inbound call). progress applies a
// non-final change (RINGING, the pre-call webhook's variables) and says
// false once the call is over.
type Connect func(ctx context.Context, progress func(call.Change) bool) (call.Line, error)

// Answer admits an inbound call c (built by call.NewInbound) and runs it
// with connect. Inbound calls are never queued: at the organization's
// concurrency limit c is stored FAILED (BUSY), its webhook delivered, and
// ErrConcurrencyLimit returned; with recordRefusal false nothing is
// stored then (the caller already recorded this caller's refusal moments
// ago: a flood of INVITEs must not become a flood of records). An inbound leg whose caller is one of our own calls
// (LoopbackCallerID) that reserved a line for it takes that line, whatever
// the count: the reservation is released and the leg admitted in the same
// transaction, so the count does not move.
func (q *Queue) Answer(ctx context.Context, c *model.Call, connect Connect, recordRefusal bool) error {
	if err := q.awaitRecovery(ctx); err != nil {
		return err
	}
	q.admissions.RLock()
	defer q.admissions.RUnlock()
	if q.closing {
		return ErrDraining
	}
	now := model.Now()
	c.Status, c.CreatedAt, c.UpdatedAt = model.CallQueued, now, now
	full := false
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		free, _, err := lineFree(ctx, tx, c.OrgID, 1)
		if err != nil {
			return err
		}
		// Released whether or not a line is free besides (the leg must not
		// hold two), and before the insert, which writes the organization's
		// count: every writer of a call takes its row before the count.
		if c.LoopbackCallerID != nil {
			released, err := tx.ReleaseReservedLine(ctx, c.OrgID, *c.LoopbackCallerID)
			if err != nil {
				return err
			}
			free = free || released
		}
		if full = !free; full {
			if !recordRefusal {
				return nil
			}
			if err := call.Apply(c, call.Change{To: model.CallFailed, HangupCause: call.CauseBusy,
				ErrorMessage: "the organization's concurrency limit is reached"}, now); err != nil {
				return err
			}
			if err := q.capturePostCallURL(ctx, tx, c); err != nil {
				return err
			}
		} else if err := q.admit(c, now); err != nil {
			return err
		}
		return tx.CreateCall(ctx, c)
	})
	if err != nil || full {
		q.unclaim(c.ID)
	}
	switch {
	case err != nil:
		return err
	case full:
		q.o.Metrics.placed.WithLabelValues("rejected").Inc()
		if recordRefusal {
			q.o.Metrics.ended.WithLabelValues(c.Status, call.CauseBusy).Inc()
			q.logEnded(*c)
			q.deliver(*c)
		}
		return ErrConcurrencyLimit
	}
	q.o.Metrics.placed.WithLabelValues("admitted").Inc()
	q.logReceived(*c)
	q.start(*c, connect)
	return nil
}

// Record stores an inbound call that was refused before admission (its
// agent disabled, say) as it stands, final, and delivers its webhook.
func (q *Queue) Record(ctx context.Context, c *model.Call, ch call.Change) error {
	now := model.Now()
	c.Status, c.CreatedAt, c.UpdatedAt = model.CallQueued, now, now
	if err := call.Apply(c, ch, now); err != nil {
		return err
	}
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		if err := q.capturePostCallURL(ctx, tx, c); err != nil {
			return err
		}
		return tx.CreateCall(ctx, c)
	})
	if err != nil {
		return err
	}
	q.o.Metrics.ended.WithLabelValues(c.Status, ch.HangupCause).Inc()
	q.logEnded(*c)
	q.deliver(*c)
	return nil
}

// Recovered is closed once Run has ended what a previous run left (the
// lost calls' legs hung up first, which takes up to a BYE's wait).
func (q *Queue) Recovered() <-chan struct{} { return q.recovered }

// awaitRecovery waits until Run has recovered what a previous run left.
func (q *Queue) awaitRecovery(ctx context.Context) error {
	select {
	case <-q.recovered:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lineFree locks the organization (held until tx ends, so the decision and
// the write that follows are one) and says whether it has need lines free
// and whether calls wait in its queue.
func lineFree(ctx context.Context, tx store.Tx, orgID string, need int) (free, queued bool, err error) {
	org, err := tx.LockOrg(ctx, orgID)
	if err != nil {
		return false, false, err
	}
	l, err := tx.CountLines(ctx, orgID)
	if err != nil {
		return false, false, err
	}
	return l.Live+need <= org.ConcurrencyLimit, l.Queued, nil
}

// lines is how many lines c holds once admitted: its own, and the one it
// reserves for its far end.
func lines(c model.Call) int {
	if c.ReservesLine {
		return 2
	}
	return 1
}

// admit moves a queued call to INITIATED under this server's lease, and
// claims it (see admitting) before the transaction that writes it commits.
// The caller unclaims it if that transaction fails; start moves it to the
// running calls.
func (q *Queue) admit(c *model.Call, now time.Time) error {
	if err := call.Apply(c, call.Change{To: model.CallInitiated}, now); err != nil {
		return err
	}
	q.mu.Lock()
	q.admitting[c.ID] = true
	q.mu.Unlock()
	until := now.Add(q.o.LeaseTTL)
	c.LeaseOwner, c.LeaseExpiresAt = &q.o.Node, &until
	q.o.Metrics.queueWait.Observe(now.Sub(c.CreatedAt).Seconds())
	return nil
}

// unclaim forgets calls admit claimed whose admission did not commit.
func (q *Queue) unclaim(ids ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		delete(q.admitting, id)
	}
}

// Run recovers what a previous run left, then dispatches queued calls,
// renews leases, reaps lost calls and delivers pending post-call webhooks
// until ctx ends. Then it stops dispatching, lets live calls finish for up to
// Drain, hangs up the rest (FAILED, SERVER_SHUTDOWN), and returns once every
// call and delivery it started is done. Queued calls stay queued.
func (q *Queue) Run(ctx context.Context) error {
	if q.reap(ctx, true) {
		q.mu.Lock()
		q.healthySince = time.Now()
		q.mu.Unlock()
	}
	close(q.recovered)
	q.sweepWebhooks(ctx)
	q.dispatch(ctx)

	var loops sync.WaitGroup
	every := func(d time.Duration, now <-chan struct{}, fn func()) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			t := time.NewTicker(d)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				case <-now:
				}
				fn()
			}
		}()
	}
	every(q.o.LeaseTTL/3, nil, func() { q.heartbeat(ctx) })
	every(q.o.LeaseTTL/2, q.orphaned, func() { q.reap(ctx, false) })
	every(sweepEvery, nil, func() { q.sweepWebhooks(ctx) })
	loops.Add(1)
	go func() {
		defer loops.Done()
		q.watchLines(ctx)
	}()
	loops.Add(1)
	go func() {
		defer loops.Done()
		t := time.NewTicker(q.o.Poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
			case <-t.C:
			}
			q.dispatch(ctx)
		}
	}()
	<-ctx.Done()
	loops.Wait()
	q.shutdown()
	return nil
}

// watchLines wakes the dispatcher whenever the store hears that another
// server (or this one) freed a line of an organization with queued calls,
// until ctx ends; a failed watch is started again after Poll. A store only
// this server uses has nothing to hear: its calls end here, and wake the
// dispatcher themselves.
func (q *Queue) watchLines(ctx context.Context) {
	for {
		err := q.o.Store.WatchLines(ctx, q.Wake)
		if err == nil || errors.Is(err, errors.ErrUnsupported) || ctx.Err() != nil {
			return
		}
		q.logErr(ctx, "watch for freed lines", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(q.o.Poll):
		}
	}
}

// shutdown lets live calls finish for up to Drain, then hangs them up. Leases
// keep being renewed meanwhile, so no other server reaps them.
func (q *Queue) shutdown() {
	q.admissions.Lock()
	q.closing = true
	q.admissions.Unlock()
	done := make(chan struct{})
	go func() {
		q.workers.Wait()
		close(done)
	}()
	renew := time.NewTicker(q.o.LeaseTTL / 3)
	defer renew.Stop()
	drain := time.NewTimer(q.o.Drain)
	defer drain.Stop()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-renew.C:
			q.heartbeat(context.Background())
		case <-drain.C:
			q.o.Logger.Warn("drain timeout: hanging up live calls", "calls", q.liveCount())
			q.stop()
			q.awaitWrites(func() { <-done })
			waiting = false
		}
	}
	q.stop()
	q.awaitWrites(q.sends.Wait)
	q.haltWrites()
}

// awaitWrites waits for wait (workers or deliveries told to stop) to
// return, halting their writes that the database does not take after
// persist.ShutdownGrace.
func (q *Queue) awaitWrites(wait func()) {
	if persist.AwaitOrHalt(wait, q.haltWrites) {
		q.o.Logger.Warn("shutdown: the database did not take the ends of calls; the next start ends them")
	}
}

func (q *Queue) liveCount() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.running)
}

// dispatch admits queued calls wherever a line is free, oldest first per
// organization, and starts them. The head of a queue that needs more lines
// than are free (a call that reserves one) waits, and so does every call
// behind it.
func (q *Queue) dispatch(ctx context.Context) {
	if q.draining.Load() {
		return // another server takes the queue (drain.go)
	}
	var orgs []string
	err := q.o.Store.View(ctx, func(tx store.Tx) (err error) {
		orgs, err = tx.OrgsWithQueuedCalls(ctx)
		return err
	})
	if err != nil {
		q.logErr(ctx, "list organizations with queued calls", err)
		return
	}
	for _, orgID := range orgs {
		var admitted []model.Call
		claimed := map[string]bool{} // over every run of the transaction's fn
		err := q.o.Store.Update(ctx, func(tx store.Tx) error {
			admitted = nil
			org, err := tx.LockOrg(ctx, orgID)
			if err != nil {
				return err
			}
			live, err := tx.CountLiveCalls(ctx, orgID)
			if err != nil || live >= org.ConcurrencyLimit {
				return err
			}
			next, err := tx.OldestQueuedCalls(ctx, orgID, org.ConcurrencyLimit-live)
			if err != nil {
				return err
			}
			now := model.Now()
			for _, c := range next {
				if live += lines(c); live > org.ConcurrencyLimit {
					break
				}
				if err := q.admit(&c, now); err != nil {
					return err
				}
				claimed[c.ID] = true
				if err := tx.UpdateCall(ctx, &c); err != nil {
					return err
				}
				admitted = append(admitted, c)
			}
			return nil
		})
		if err != nil {
			admitted = nil
		}
		for _, c := range admitted {
			delete(claimed, c.ID)
		}
		q.unclaim(slices.Collect(maps.Keys(claimed))...)
		if err != nil {
			q.logErr(ctx, "dispatch queued calls", err, "org_id", orgID)
			continue
		}
		for _, c := range admitted {
			q.start(c, nil)
		}
	}
}

func (q *Queue) logErr(ctx context.Context, msg string, err error, attrs ...any) {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return // shutting down
	}
	q.o.Logger.ErrorContext(ctx, msg, append(attrs, "err", err)...)
}
