package callqueue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const (
	// byeWait bounds the wait for one lost leg's BYE (or CANCEL) to be
	// answered: a few retransmissions over UDP, and never a restart held
	// up for long.
	byeWait = 10 * time.Second
	// byesAtOnce bounds the BYEs and CANCELs in flight.
	byesAtOnce = 32
)

// lostLeg is a ringing or answered call reap is about to end, with its
// saved leg.
type lostLeg struct {
	call  model.Call
	state []byte
}

// hangUpLost ends the saved leg of each ringing or answered call reap
// would end now (the Dialer sends CANCEL on a ringing leg, BYE on an
// answered one), concurrently (byesAtOnce at a time, each for at most
// byeWait), and returns the ids of the calls it tried. A leg that fails to
// end is logged: the call ends all the same. Nothing is sent when the
// Dialer cannot hang up lost legs.
func (q *Queue) hangUpLost(ctx context.Context, starting bool) map[string]bool {
	ll, ok := q.o.Dialer.(call.LostLegs)
	if !ok {
		return nil
	}
	var legs []lostLeg
	err := q.o.Store.View(ctx, func(tx store.Tx) error {
		legs = nil
		owner, cutoff := q.lostScope(starting)
		lost, err := tx.ExpiredLiveCalls(ctx, owner, q.runningIDs(), cutoff, reapBatch)
		if err != nil {
			return err
		}
		for _, c := range lost {
			if (c.Status != model.CallRinging && c.Status != model.CallInProgress) || q.isRunning(c.ID) {
				continue
			}
			d, err := tx.GetCallDialog(ctx, c.OrgID, c.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				continue // answered before dialogs were saved, or a loopback leg
			case err != nil:
				return err
			}
			legs = append(legs, lostLeg{call: c, state: d.State})
		}
		return nil
	})
	if err != nil {
		q.logErr(ctx, "read the dialogs of lost calls", err)
		return nil
	}
	tried := make(map[string]bool, len(legs))
	slots := make(chan struct{}, byesAtOnce)
	var wg sync.WaitGroup
	for _, l := range legs {
		tried[l.call.ID] = true
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			bctx, cancel := context.WithTimeout(ctx, byeWait)
			defer cancel()
			log := q.o.Logger.With("call_id", l.call.ID, "org_id", l.call.OrgID)
			what, counter := "BYE", q.o.Metrics.lostByes
			if l.call.Status == model.CallRinging {
				what, counter = "CANCEL", q.o.Metrics.lostCancels
			}
			if err := ll.HangUpLost(bctx, l.call, l.state); err != nil {
				log.Warn(what+" on a lost call's leg failed; the call ends anyway", "err", err)
				counter.WithLabelValues("failed").Inc()
				return
			}
			log.Info("sent " + what + " on a lost call's leg")
			counter.WithLabelValues("answered").Inc()
		})
	}
	wg.Wait()
	return tried
}
