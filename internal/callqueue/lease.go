package callqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// reapBatch bounds how many lost calls one pass ends.
const reapBatch = 100

var endOfTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// heartbeat renews this server's leases, and stops local workers whose call
// was ended elsewhere (canceled through another server).
func (q *Queue) heartbeat(ctx context.Context) {
	until := model.Now().Add(q.o.LeaseTTL)
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.RenewLeases(ctx, q.o.Node, until)
		return err
	})
	if err != nil {
		q.logErr(ctx, "renew call leases", err)
	}
	q.mu.Lock()
	byOrg := map[string][]string{}
	for id, w := range q.running {
		byOrg[w.call.OrgID] = append(byOrg[w.call.OrgID], id)
	}
	q.mu.Unlock()
	for orgID, ids := range byOrg {
		calls, err := store.Read(ctx, q.o.Store, func(tx store.Tx) ([]model.Call, error) { return tx.GetCalls(ctx, orgID, ids) })
		if err != nil {
			q.logErr(ctx, "check running calls", err)
			continue
		}
		for _, c := range calls {
			if call.IsFinal(c.Status) {
				q.mu.Lock()
				if w := q.running[c.ID]; w != nil {
					w.cancel(errGone)
				}
				q.mu.Unlock()
			}
		}
	}
}

// reap ends live calls whose server is gone. At start it also ends this
// server's own calls from its previous run (SERVER_RESTART) — every live
// call, when the database is this server's alone. An answered call's far
// end is sent BYE first, a ringing one's CANCEL (hangUpLost).
func (q *Queue) reap(ctx context.Context, starting bool) {
	for {
		hungUp := q.hangUpLost(ctx, starting)
		var ended []model.Call
		found := 0
		err := q.o.Store.Update(ctx, func(tx store.Tx) error {
			ended = nil
			owner, cutoff := q.lostScope(starting)
			now := model.Now()
			lost, err := tx.ExpiredLiveCalls(ctx, owner, cutoff, reapBatch)
			if err != nil {
				return err
			}
			found = len(lost)
			// One organization's calls after another's: ending a call
			// writes its organization's live count, and two servers
			// reaping at once must take those rows in the same order
			// (PostgreSQL would abort one as a deadlock otherwise).
			slices.SortStableFunc(lost, func(a, b model.Call) int { return strings.Compare(a.OrgID, b.OrgID) })
			for _, c := range lost {
				if q.isRunning(c.ID) {
					continue // ours and alive: its lease is merely late
				}
				answered := c.Status == model.CallRinging || c.Status == model.CallInProgress // rang: it may have a saved leg
				if answered && !starting && !hungUp[c.ID] {
					// Lost since hangUpLost looked: the next pass sends its
					// BYE (or CANCEL) first. (Not at start: this server's heartbeat
					// would keep such a call's lease alive for ever.)
					_, err := tx.GetCallDialog(ctx, c.OrgID, c.ID)
					if err == nil {
						continue
					}
					if !errors.Is(err, store.ErrNotFound) {
						return err
					}
				}
				ch := call.Change{To: model.CallFailed, HangupCause: call.CauseLeaseExpired}
				switch {
				case starting && (q.o.ReclaimAllOnStart || (c.LeaseOwner != nil && *c.LeaseOwner == q.o.Node)):
					ch.HangupCause, ch.ErrorMessage = call.CauseServerRestart, "the server restarted during the call"
				default:
					ch.ErrorMessage = fmt.Sprintf("the server running the call (%s) stopped renewing its lease", deref(c.LeaseOwner))
				}
				if err := call.Apply(&c, ch, now); err != nil {
					return err
				}
				if err := q.capturePostCallURL(ctx, tx, &c); err != nil {
					return err
				}
				if err := tx.UpdateCall(ctx, &c); err != nil {
					return err
				}
				if answered {
					if err := tx.DeleteCallDialog(ctx, c.OrgID, c.ID); err != nil {
						return err
					}
				}
				ended = append(ended, c)
			}
			return nil
		})
		if err != nil {
			q.logErr(ctx, "end lost calls", err)
			return
		}
		for _, c := range ended {
			q.o.Logger.Warn("ended a lost call", "call_id", c.ID, "org_id", c.OrgID, "cause", *c.HangupCause)
			q.o.Metrics.ended.WithLabelValues(c.Status, *c.HangupCause).Inc()
			q.deliver(c)
		}
		if found < reapBatch || len(ended) == 0 {
			return
		}
	}
}

// lostScope is which live calls reap takes: those whose lease expired
// before cutoff, and at start those owner (this server) held.
func (q *Queue) lostScope(starting bool) (owner string, cutoff time.Time) {
	owner, cutoff = "", model.Now()
	if starting {
		owner = q.o.Node
		if q.o.ReclaimAllOnStart {
			cutoff = endOfTime // every live call counts as lost
		}
	}
	return owner, cutoff
}

func (q *Queue) isRunning(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running[id] != nil
}

func deref(s *string) string {
	if s == nil {
		return "unknown"
	}
	return *s
}
