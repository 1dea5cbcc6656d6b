package storetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// liveCountTests check the live-call count that admission reads (a row the
// schema keeps) against the calls themselves.
var liveCountTests = []test{
	{"CountLines", func(t *testing.T, b *bundle) {
		lines := func(orgID string) store.Lines {
			return read(t, b, func(tx store.Tx) (store.Lines, error) { return tx.CountLines(b.ctx, orgID) })
		}
		wantEqual(t, store.Lines{}, lines(b.org.ID))
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallRinging))
		newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallCompleted))
		wantEqual(t, store.Lines{Live: 1}, lines(b.org.ID))
		q := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallQueued))
		wantEqual(t, store.Lines{Live: 1, Queued: true}, lines(b.org.ID))
		wantEqual(t, store.Lines{}, lines(b.other.ID))
		setStatus(t, b, q, model.CallInitiated)
		wantEqual(t, store.Lines{Live: 2}, lines(b.org.ID))
		wantEqual(t, store.Lines{}, lines("not-a-uuid"))
	}},
	{"AfterRaces", func(t *testing.T, b *bundle) {
		// Writers race through every path that starts or ends a live call
		// (created live or queued, admitted, rung, answered, ended one by
		// one, or ended in bulk by a reaper), in both organizations; the
		// kept count must equal a count of the calls.
		paths := [][]string{
			{model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress, model.CallCompleted},
			{model.CallInitiated, model.CallRinging, model.CallFailed},
			{model.CallQueued, model.CallCanceled},
			{model.CallInitiated, model.CallInProgress},
			{model.CallQueued, model.CallInitiated},
			{model.CallRinging, model.CallCanceled},
			{model.CallCompleted},
		}
		const writers, callsEach = 8, 12
		var wg sync.WaitGroup
		errs := make(chan error, writers*callsEach*6+writers)
		for w := range writers {
			wg.Go(func() {
				orgID := b.org.ID
				if w%3 == 2 {
					orgID = b.other.ID
				}
				for i := range callsEach {
					path := paths[(w+i)%len(paths)]
					c := model.Call{
						OrgID: orgID, AgentID: model.NewID(), Direction: model.Outbound, Status: path[0],
						FromNumber: "+15550001000", ToNumber: fmt.Sprintf("+1555%03d%04d", w, i),
					}
					if err := b.st.Update(b.ctx, func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) }); err != nil {
						errs <- err
						continue
					}
					for _, status := range path[1:] {
						errs <- b.st.Update(b.ctx, func(tx store.Tx) error {
							cur, err := tx.GetCallForUpdate(b.ctx, c.OrgID, c.ID)
							if err != nil || !slices.Contains(model.LiveCallStatuses, cur.Status) && cur.Status != model.CallQueued {
								return err // a reaper ended it first
							}
							cur.Status = status
							return tx.UpdateCall(b.ctx, &cur)
						})
					}
				}
				// A reaper: ends a batch of live calls of any organization in
				// one transaction.
				errs <- b.st.Update(b.ctx, func(tx store.Tx) error {
					lost, err := tx.ExpiredLiveCalls(b.ctx, "", nil, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), 5)
					if err != nil {
						return err
					}
					// In organization order, as ExpiredLiveCalls asks.
					slices.SortStableFunc(lost, func(a, b model.Call) int { return strings.Compare(a.OrgID, b.OrgID) })
					for _, c := range lost {
						c.Status = model.CallFailed
						if err := tx.UpdateCall(b.ctx, &c); err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, orgID := range []string{b.org.ID, b.other.ID} {
			kept := read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, orgID) })
			counted := read(t, b, func(tx store.Tx) (int, error) {
				_, n, err := tx.ListCalls(b.ctx, orgID, store.CallFilter{Statuses: model.LiveCallStatuses, Page: store.Page{Number: 1, Size: 1}, Minimal: true})
				return n, err
			})
			wantEqual(t, counted, kept)
		}
	}},
}

// changeCallTests check ChangeCall and ChangeCallFrom, the lifecycle's
// writes of what changed.
var changeCallTests = []test{
	{"WritesWhatChanged", func(t *testing.T, b *bundle) {
		trunk := newSIPTrunk(t, b, b.org.ID)
		c := fullCall(b.org.ID, model.NewID(), trunk.ID)
		c.Status, c.EndedAt, c.DurationSeconds, c.HangupCause = model.CallRinging, nil, nil, nil
		b.update(t, func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) })
		var want model.Call
		b.update(t, func(tx store.Tx) error {
			cur, err := tx.GetCallForUpdate(b.ctx, c.OrgID, c.ID)
			if err != nil {
				return err
			}
			before := cur
			before.Variables, before.Metrics = maps.Clone(cur.Variables), maps.Clone(cur.Metrics)
			end, d, cause := at(9), 42, "USER_ENDED"
			cur.Status, cur.EndedAt, cur.DurationSeconds, cur.HangupCause = model.CallCompleted, &end, &d, &cause
			cur.Variables["added"] = "yes" // changed in place, as call.Apply does
			cur.LeaseOwner, cur.LeaseExpiresAt, cur.UpdatedAt = nil, nil, at(9)
			want = cur
			return tx.ChangeCall(b.ctx, &before, &cur)
		})
		wantEqual(t, want, getCall(t, b, c.OrgID, c.ID))
		wantEqual(t, 0, read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) }))
		// Nothing changed: nothing written, not even to a call that is gone.
		b.update(t, func(tx store.Tx) error { return tx.ChangeCall(b.ctx, &want, &want) })
		gone := want
		gone.ID = model.NewID()
		changed := gone
		changed.Status = model.CallFailed
		err := b.st.Update(b.ctx, func(tx store.Tx) error { return tx.ChangeCall(b.ctx, &gone, &changed) })
		wantIs(t, err, store.ErrNotFound)
	}},
	{"FromWritesWhatChangedAndReturnsTheRow", func(t *testing.T, b *bundle) {
		trunk := newSIPTrunk(t, b, b.org.ID)
		c := fullCall(b.org.ID, model.NewID(), trunk.ID)
		c.Status, c.StartedAt, c.EndedAt, c.DurationSeconds, c.HangupCause = model.CallInitiated, nil, nil, nil, nil
		c.Transcript = nil
		b.update(t, func(tx store.Tx) error { return tx.CreateCall(b.ctx, &c) })
		// Appended since the writer last wrote the call: it must come back
		// with the row, and not be overwritten.
		entry := map[string]any{"role": "agent", "text": "hello"}
		b.update(t, func(tx store.Tx) error {
			return tx.AppendTranscript(b.ctx, c.OrgID, c.ID, []map[string]any{entry}, at(5))
		})
		known := c
		known.Variables, known.Metrics = maps.Clone(c.Variables), maps.Clone(c.Metrics)
		next := c
		next.Variables, next.Metrics = maps.Clone(c.Variables), maps.Clone(c.Metrics)
		started := at(6)
		next.Status, next.StartedAt, next.UpdatedAt = model.CallInProgress, &started, at(6)
		next.Variables["answered"] = "yes"
		var got model.Call
		var ok bool
		b.update(t, func(tx store.Tx) (err error) {
			got, ok, err = tx.ChangeCallFrom(b.ctx, &known, &next)
			return err
		})
		if !ok {
			t.Fatal("ChangeCallFrom found no INITIATED call")
		}
		stored := getCall(t, b, c.OrgID, c.ID)
		wantEqual(t, stored, got)
		wantEqual(t, model.CallInProgress, got.Status)
		wantEqual(t, "yes", got.Variables["answered"])
		wantEqual(t, 1, len(got.Transcript))
		wantEqual(t, at(6), got.UpdatedAt)
		wantEqual(t, 1, read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) }))

		// A writer whose view is stale (the call moved on) writes nothing.
		end, cause := at(7), "USER_ENDED"
		stale := next
		stale.Status, stale.EndedAt, stale.HangupCause, stale.UpdatedAt = model.CallFailed, &end, &cause, at(7)
		b.update(t, func(tx store.Tx) (err error) {
			_, ok, err = tx.ChangeCallFrom(b.ctx, &known, &stale)
			return err
		})
		if ok {
			t.Fatal("ChangeCallFrom wrote from INITIATED to a call that is IN_PROGRESS")
		}
		wantEqual(t, stored, getCall(t, b, c.OrgID, c.ID))

		// Ended from what it last wrote: the live count follows.
		b.update(t, func(tx store.Tx) (err error) {
			got, ok, err = tx.ChangeCallFrom(b.ctx, &stored, &stale)
			return err
		})
		if !ok || got.Status != model.CallFailed {
			t.Fatalf("ended from IN_PROGRESS: ok %v, status %s", ok, got.Status)
		}
		wantEqual(t, 0, read(t, b, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(b.ctx, b.org.ID) }))

		// Nothing changed: the row comes back all the same; a call that is
		// not there is no row.
		b.update(t, func(tx store.Tx) (err error) {
			got, ok, err = tx.ChangeCallFrom(b.ctx, &got, &got)
			return err
		})
		if !ok || got.Status != model.CallFailed {
			t.Fatalf("unchanged: ok %v, status %s", ok, got.Status)
		}
		gone := got
		gone.ID = model.NewID()
		b.update(t, func(tx store.Tx) (err error) {
			_, ok, err = tx.ChangeCallFrom(b.ctx, &gone, &gone)
			return err
		})
		if ok {
			t.Fatal("ChangeCallFrom found a call that does not exist")
		}
	}},
}

// setStatus moves a stored call to status.
func setStatus(t *testing.T, b *bundle, c model.Call, status string) {
	t.Helper()
	b.update(t, func(tx store.Tx) error {
		cur, err := tx.GetCallForUpdate(b.ctx, c.OrgID, c.ID)
		if err != nil {
			return err
		}
		cur.Status = status
		return tx.UpdateCall(b.ctx, &cur)
	})
}
