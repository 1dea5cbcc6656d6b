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

// heartbeat renews the leases of the calls this server runs (and those it
// is admitting), never of a call it holds but no longer runs: that one
// lapses, and the reaper takes it. It also stops local workers whose call
// was ended elsewhere (canceled through another server).
func (q *Queue) heartbeat(ctx context.Context) {
	until := model.Now().Add(q.o.LeaseTTL)
	ids := q.runningIDs()
	err := q.o.Store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.RenewLeases(ctx, q.o.Node, ids, until)
		return err
	})
	q.mu.Lock()
	switch {
	case err != nil:
		q.healthySince = time.Time{}
	case q.healthySince.IsZero():
		q.healthySince = time.Now()
	}
	q.mu.Unlock()
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

// reap ends live calls whose server is gone, and this server's calls that
// no worker runs any more (their end could not be written in time). At
// start it also ends this server's own calls from its previous run
// (SERVER_RESTART) — every live call, when the database is this server's
// alone. An answered call's far end is sent BYE first, a ringing one's
// CANCEL (hangUpLost). It says whether it reached the database.
func (q *Queue) reap(ctx context.Context, starting bool) bool {
	for {
		hungUp := q.hangUpLost(ctx, starting)
		var ended []model.Call
		found := 0
		err := q.o.Store.Update(ctx, func(tx store.Tx) error {
			ended = nil
			owner, cutoff := q.lostScope(starting)
			now := model.Now()
			lost, err := tx.ExpiredLiveCalls(ctx, owner, q.runningIDs(), cutoff, reapBatch)
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
				mine := c.LeaseOwner != nil && *c.LeaseOwner == q.o.Node
				switch {
				case starting && (q.o.ReclaimAllOnStart || mine):
					ch.HangupCause, ch.ErrorMessage = call.CauseServerRestart, "the server restarted during the call"
				case mine:
					ch.ErrorMessage = "the server running the call could not record its state in time and gave it up"
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
			return false
		}
		for _, c := range ended {
			q.logEnded(c) // FAILED: a WARN line with the cause (LEASE_EXPIRED, SERVER_RESTART)
			q.o.Metrics.ended.WithLabelValues(c.Status, *c.HangupCause).Inc()
			q.deliver(c)
		}
		if len(ended) > 0 {
			q.freed() // lines are free
		}
		if found < reapBatch || len(ended) == 0 {
			return true
		}
	}
}

// lostScope is which live calls reap takes: this server's (owner) that it
// does not run, and those whose lease expired before cutoff. At start
// cutoff is now, or the end of time when the database is this server's
// alone. Later it is now once the database has answered the heartbeat for
// a whole lease; before that (after an outage) it takes only calls nobody
// leases: the other servers could not renew their leases either.
func (q *Queue) lostScope(starting bool) (owner string, cutoff time.Time) {
	owner, cutoff = q.o.Node, model.Now()
	switch {
	case starting && q.o.ReclaimAllOnStart:
		cutoff = endOfTime // every live call counts as lost
	case !starting:
		q.mu.Lock()
		healthy := q.healthySince
		q.mu.Unlock()
		if healthy.IsZero() || time.Since(healthy) < q.o.LeaseTTL {
			cutoff = time.Time{}
		}
	}
	return owner, cutoff
}

// isRunning says whether a worker here runs the call, or it is being
// admitted here.
func (q *Queue) isRunning(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running[id] != nil || q.admitting[id]
}

// runningIDs are the calls isRunning says yes to, now.
func (q *Queue) runningIDs() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, 0, len(q.running)+len(q.admitting))
	for id := range q.running {
		ids = append(ids, id)
	}
	for id := range q.admitting {
		ids = append(ids, id)
	}
	return ids
}

func deref(s *string) string {
	if s == nil {
		return "unknown"
	}
	return *s
}
