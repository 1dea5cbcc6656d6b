package campaign

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// Placer places a campaign's call on the call plane: callqueue.Queue. The
// record function runs in the transaction that stores the call, under the
// organization's admission lock; its error undoes the call.
type Placer interface {
	PlaceRecorded(ctx context.Context, c *model.Call, skipQueue bool, record func(store.Tx, model.Call) error) error
}

// Deliverer sends one webhook: webhook.Sender.
type Deliverer interface {
	Deliver(ctx context.Context, d webhook.Delivery) webhook.Result
}

// Dispatcher dials running campaigns' recipients. One runs on every server;
// for each running campaign, the server holding its dispatch (a hold renewed
// like a lease, so a lost server's campaigns pass to another) learns the
// outcomes of its recipients' calls, expires what endAt left, completes it
// when nothing is left, and places the calls that are due. A call is placed
// through the call plane like any other, and the transaction that stores it
// also moves its recipient to in_progress, after checking, under the
// organization's lock, every rule a dial must keep (gate.go): so a crash
// or a second server can never dial a recipient twice for one attempt, and
// the rules hold exactly whichever servers plan. Recipients outside their
// calling window are parked until it opens (NextAttemptAt), so a list
// mostly out of hours costs nothing per tick.
type Dispatcher struct {
	Store store.Store
	Calls Placer
	// Webhooks delivers campaign_completed, signed with Secret's answer.
	Webhooks Deliverer
	Secret   func(ctx context.Context, orgID string) (string, error)
	// Node names this server among those sharing the database.
	Node string
	// Tick is how often running campaigns are looked at when nothing woke
	// the dispatcher (default 1 s): it bounds how late an outcome is
	// recorded and a window's opening is noticed.
	Tick time.Duration
	// Hold is how long a campaign's dispatch stays this server's without
	// renewal (default 15 s).
	Hold time.Duration
	// Now is the clock (default time.Now).
	Now     func() time.Time
	Logger  *slog.Logger
	Metrics *Metrics

	init  sync.Once
	wake  chan struct{}
	turns map[string]int // caller-id turns per campaign; Run's goroutine alone
	sends sync.WaitGroup // webhook deliveries
	mu    sync.Mutex
	// sending are the campaigns whose campaign_completed is under way here.
	sending map[string]bool
}

// Most work one pass does for one campaign: dials placed, and recipients
// parked outside their windows (the rest wait for the next pass).
const (
	maxDialsPerPass = 200
	maxParksPerPass = 5000
	duePage         = 250
)

func (d *Dispatcher) setup() {
	d.init.Do(func() {
		d.wake = make(chan struct{}, 1)
		d.turns = map[string]int{}
		d.sending = map[string]bool{}
		if d.Tick <= 0 {
			d.Tick = time.Second
		}
		if d.Hold <= 0 {
			d.Hold = 15 * time.Second
		}
		if d.Now == nil {
			d.Now = time.Now
		}
		if d.Logger == nil {
			d.Logger = slog.Default()
		}
		if d.Metrics == nil {
			d.Metrics = NewMetrics(nil)
		}
	})
}

// Wake asks the dispatcher to look at the campaigns now (a campaign
// started or resumed, recipients added, a call ended).
func (d *Dispatcher) Wake() {
	d.setup()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run dispatches until ctx ends, then waits for the webhook deliveries it
// started.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.setup()
	t := time.NewTicker(d.Tick)
	defer t.Stop()
	for {
		again := d.pass(ctx)
		// A campaign held back only by its pace is looked at again the
		// moment the pace allows its next dial, not at the next tick.
		var soon <-chan time.Time
		if !again.IsZero() {
			soon = time.After(max(again.Sub(d.Now()), time.Millisecond))
		}
		select {
		case <-ctx.Done():
			d.sends.Wait()
			return nil
		case <-t.C:
		case <-soon:
		case <-d.wake:
		}
	}
}

// pass looks at every campaign with work once, and returns the earliest
// time a running campaign's pace next allows a dial it held back (zero:
// none).
func (d *Dispatcher) pass(ctx context.Context) (again time.Time) {
	start := time.Now()
	defer func() { d.Metrics.pass.Observe(time.Since(start).Seconds()) }()
	camps, err := store.Read(ctx, d.Store, func(tx store.Tx) ([]model.Campaign, error) {
		return tx.ActiveCampaigns(ctx, 1000)
	})
	if err != nil {
		d.logErr(ctx, "list active campaigns", err)
		return
	}
	running := 0
	for _, c := range camps {
		if ctx.Err() != nil {
			return
		}
		switch c.Status {
		case model.CampaignRunning:
			running++
			if at := d.drive(ctx, c); !at.IsZero() && (again.IsZero() || at.Before(again)) {
				again = at
			}
		case model.CampaignPaused:
			d.drive(ctx, c) // its live calls' outcomes
		default:
			d.announce(ctx, c)
		}
	}
	d.Metrics.running.Set(float64(running))
	return again
}

// drive does one pass's work for a campaign this server holds (a paused
// one's: its calls' outcomes), and says when its pace next allows a dial
// it held back (dial).
func (d *Dispatcher) drive(ctx context.Context, c model.Campaign) time.Time {
	now := d.Now()
	if !d.hold(ctx, c, now) {
		return time.Time{}
	}
	c, err := d.settle(ctx, c, now)
	if err != nil {
		d.logErr(ctx, "settle campaign", err, "campaign_id", c.ID)
		return time.Time{}
	}
	switch c.Status {
	case model.CampaignRunning:
		return d.dial(ctx, c, now)
	case model.CampaignCompleted:
		delete(d.turns, c.ID) // it dials no more
		d.announce(ctx, c)
	}
	return time.Time{}
}

// hold takes or renews this server's hold on the campaign's dispatch,
// renewing only once half of it is spent (a write per campaign per tick
// would be the dispatcher's main cost on an idle list).
func (d *Dispatcher) hold(ctx context.Context, c model.Campaign, now time.Time) bool {
	if c.DispatchOwner != nil && *c.DispatchOwner == d.Node && c.DispatchUntil != nil && c.DispatchUntil.Sub(now) > d.Hold/2 {
		return true
	}
	var ok bool
	err := d.Store.Update(ctx, func(tx store.Tx) (err error) {
		ok, err = tx.ClaimCampaignDispatch(ctx, c.OrgID, c.ID, d.Node, now, now.Add(d.Hold))
		return err
	})
	if err != nil {
		d.logErr(ctx, "hold campaign dispatch", err, "campaign_id", c.ID)
		return false
	}
	return ok
}

func (d *Dispatcher) logErr(ctx context.Context, msg string, err error, attrs ...any) {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return // shutting down
	}
	d.Logger.ErrorContext(ctx, msg, append(attrs, "err", err)...)
}
