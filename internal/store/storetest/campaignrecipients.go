package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// recipient is a pending recipient to add (ids are UUIDv7: made one after
// another, they sort in the order made).
func recipient(number string, mods ...func(*model.CampaignRecipient)) model.CampaignRecipient {
	r := model.CampaignRecipient{ID: model.NewID(), ToNumber: number, Variables: map[string]any{}, Status: model.RecipientPending,
		CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&r)
	}
	return r
}

// addRecipients adds rs to c and returns them as stored.
func addRecipients(t *testing.T, b *bundle, c model.Campaign, rs ...model.CampaignRecipient) []model.CampaignRecipient {
	t.Helper()
	b.update(t, func(tx store.Tx) error {
		_, _, err := tx.AddCampaignRecipients(b.ctx, c.OrgID, c.ID, rs)
		return err
	})
	return rs
}

func getRecipient(t *testing.T, b *bundle, r model.CampaignRecipient) model.CampaignRecipient {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.CampaignRecipient, error) {
		return tx.GetCampaignRecipient(b.ctx, r.OrgID, r.CampaignID, r.ID)
	})
}

func listRecipients(t *testing.T, b *bundle, c model.Campaign, f store.RecipientFilter) ([]model.CampaignRecipient, int) {
	t.Helper()
	var rs []model.CampaignRecipient
	var total int
	err := b.view(func(tx store.Tx) (err error) {
		rs, total, err = tx.ListCampaignRecipients(b.ctx, c.OrgID, c.ID, f)
		return err
	})
	if err != nil {
		t.Fatalf("list recipients: %v", err)
	}
	return rs, total
}

func recipientIDs(rs []model.CampaignRecipient) []string {
	ids := []string{}
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	return ids
}

// wantCounts checks c's counts as stored, and that they are what its
// recipients' statuses add up to.
func wantCounts(t *testing.T, b *bundle, c model.Campaign, want model.CampaignCounts) {
	t.Helper()
	wantEqual(t, want, getCampaign(t, b, c.OrgID, c.ID).Counts)
	rs, _ := listRecipients(t, b, c, store.RecipientFilter{})
	by := map[string]int{}
	for _, r := range rs {
		by[r.Status]++
	}
	wantEqual(t, want, model.CampaignCounts{Total: len(rs), Pending: by[model.RecipientPending],
		InProgress: by[model.RecipientInProgress], Completed: by[model.RecipientCompleted], Failed: by[model.RecipientFailed],
		Suppressed: by[model.RecipientSuppressed], Expired: by[model.RecipientExpired], Canceled: by[model.RecipientCanceled]})
}

// change runs ChangeRecipient and returns whether it landed.
func change(t *testing.T, b *bundle, before, after model.CampaignRecipient) bool {
	t.Helper()
	var ok bool
	b.update(t, func(tx store.Tx) (err error) {
		ok, err = tx.ChangeRecipient(b.ctx, &before, &after)
		return err
	})
	return ok
}

var recipientTests = []test{
	{"AddGet", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		rs := []model.CampaignRecipient{
			recipient("+15550002001", func(r *model.CampaignRecipient) {
				r.Variables = map[string]any{"name": "Ada", "plan": "gold"}
				r.Timezone = ptr("America/Chicago")
			}),
			recipient("+15550002002", func(r *model.CampaignRecipient) { r.Status = model.RecipientSuppressed }),
			{ToNumber: "+15550002003", Status: model.RecipientPending}, // the store fills id, documents and times
		}
		var added, suppressed int
		b.update(t, func(tx store.Tx) (err error) {
			added, suppressed, err = tx.AddCampaignRecipients(b.ctx, c.OrgID, c.ID, rs)
			return err
		})
		wantEqual(t, 3, added)
		wantEqual(t, 1, suppressed)
		if !model.IsUUID(rs[2].ID) || rs[2].CreatedAt.IsZero() || rs[2].Variables == nil || rs[2].CallIDs == nil {
			t.Fatalf("the store did not fill in %+v", rs[2])
		}
		for _, r := range rs {
			wantEqual(t, c.OrgID, r.OrgID)
			wantEqual(t, c.ID, r.CampaignID)
			wantEqual(t, r, getRecipient(t, b, r))
		}
		wantCounts(t, b, c, model.CampaignCounts{Total: 3, Pending: 2, Suppressed: 1})
	}},
	{"Duplicates", func(t *testing.T, b *bundle) {
		c, d := newCampaign(t, b, b.org.ID), newCampaign(t, b, b.org.ID)
		first := addRecipients(t, b, c, recipient("+15550002001"), recipient("+15550002002"))
		addRecipients(t, b, d, recipient("+15550002001")) // another campaign may hold the number
		again := []model.CampaignRecipient{
			recipient("+15550002002", func(r *model.CampaignRecipient) { r.Variables = map[string]any{"v": "second"} }),
			recipient("+15550002003", func(r *model.CampaignRecipient) { r.Status = model.RecipientSuppressed }),
			recipient("+15550002001", func(r *model.CampaignRecipient) { r.Status = model.RecipientSuppressed }),
			recipient("+15550002004"),
			recipient("+15550002004"), // twice in the same batch: stored once
		}
		var added, suppressed int
		b.update(t, func(tx store.Tx) (err error) {
			added, suppressed, err = tx.AddCampaignRecipients(b.ctx, c.OrgID, c.ID, again)
			return err
		})
		wantEqual(t, 2, added)
		wantEqual(t, 1, suppressed)
		wantEqual(t, first[1], getRecipient(t, b, first[1])) // the first kept, untouched
		wantCounts(t, b, c, model.CampaignCounts{Total: 4, Pending: 3, Suppressed: 1})
		wantCounts(t, b, d, model.CampaignCounts{Total: 1, Pending: 1})

		// All duplicates: nothing added, nothing counted.
		b.update(t, func(tx store.Tx) (err error) {
			added, suppressed, err = tx.AddCampaignRecipients(b.ctx, c.OrgID, c.ID, []model.CampaignRecipient{recipient("+15550002001")})
			return err
		})
		wantEqual(t, 0, added+suppressed)
		wantCounts(t, b, c, model.CampaignCounts{Total: 4, Pending: 3, Suppressed: 1})
	}},
	{"AddNotFound", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		for _, batch := range [][]model.CampaignRecipient{{recipient("+15550002001")}, {}} {
			for _, target := range [][2]string{{b.other.ID, c.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"}} {
				wantIs(t, b.writeErr(func(tx store.Tx) error {
					_, _, err := tx.AddCampaignRecipients(b.ctx, target[0], target[1], batch)
					return err
				}), store.ErrNotFound)
			}
		}
		wantCounts(t, b, c, model.CampaignCounts{})
	}},
	{"AddMany", func(t *testing.T, b *bundle) {
		// More rows than one statement carries, and a remainder that is no
		// power of two: every chunk lands, in order, counted once.
		c := newCampaign(t, b, b.org.ID)
		const n = 2*1024 + 1000 + 7
		rs := make([]model.CampaignRecipient, n)
		for i := range rs {
			rs[i] = recipient(fmt.Sprintf("+1555%07d", i))
			if i%100 == 0 {
				rs[i].Status = model.RecipientSuppressed
			}
		}
		var added, suppressed int
		b.update(t, func(tx store.Tx) (err error) {
			added, suppressed, err = tx.AddCampaignRecipients(b.ctx, c.OrgID, c.ID, rs)
			return err
		})
		wantEqual(t, n, added)
		wantEqual(t, (n+99)/100, suppressed)
		wantCounts(t, b, c, model.CampaignCounts{Total: n, Pending: n - suppressed, Suppressed: suppressed})
		got, total := listRecipients(t, b, c, store.RecipientFilter{})
		wantEqual(t, n, total)
		wantEqual(t, recipientIDs(rs), recipientIDs(got))
	}},
	{"List", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		var rs []model.CampaignRecipient
		for i := range 5 {
			rs = append(rs, recipient(fmt.Sprintf("+1555000200%d", i), func(r *model.CampaignRecipient) {
				if i%2 == 1 {
					r.Status = model.RecipientSuppressed
				}
			}))
		}
		addRecipients(t, b, c, rs...)
		other := newCampaign(t, b, b.org.ID)
		addRecipients(t, b, other, recipient("+15550002000"))

		got, total := listRecipients(t, b, c, store.RecipientFilter{})
		wantEqual(t, recipientIDs(rs), recipientIDs(got)) // upload order by default
		wantEqual(t, 5, total)
		wantEqual(t, rs[0], got[0])
		got, _ = listRecipients(t, b, c, store.RecipientFilter{Page: store.Page{SortDir: store.Desc}})
		wantEqual(t, []string{rs[4].ID, rs[3].ID, rs[2].ID, rs[1].ID, rs[0].ID}, recipientIDs(got))
		got, total = listRecipients(t, b, c, store.RecipientFilter{Page: store.Page{Number: 2, Size: 2}})
		wantEqual(t, []string{rs[2].ID, rs[3].ID}, recipientIDs(got))
		wantEqual(t, 5, total)
		got, total = listRecipients(t, b, c, store.RecipientFilter{Page: store.Page{Number: 4, Size: 2}})
		wantEqual(t, []string{}, recipientIDs(got))
		wantEqual(t, 5, total)
		got, total = listRecipients(t, b, c, store.RecipientFilter{Status: model.RecipientSuppressed})
		wantEqual(t, []string{rs[1].ID, rs[3].ID}, recipientIDs(got))
		wantEqual(t, 2, total)
		got, total = listRecipients(t, b, c, store.RecipientFilter{Status: model.RecipientPending, Page: store.Page{Size: 2, SortDir: store.Desc}})
		wantEqual(t, []string{rs[4].ID, rs[2].ID}, recipientIDs(got))
		wantEqual(t, 3, total)
		got, total = listRecipients(t, b, c, store.RecipientFilter{Status: "bogus"})
		if len(got) != 0 || total != 0 {
			t.Fatalf("an unknown status lists %d (%d)", len(got), total)
		}
	}},
	{"TenantIsolation", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		rs := addRecipients(t, b, c, recipient("+15550002001"), recipient("+15550002002", func(r *model.CampaignRecipient) {
			r.Status = model.RecipientInProgress
		}))
		for _, key := range [][3]string{{b.other.ID, c.ID, rs[0].ID}, {b.org.ID, model.NewID(), rs[0].ID}, {b.org.ID, c.ID, model.NewID()}, {b.org.ID, c.ID, "x"}} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.CampaignRecipient, error) {
				return tx.GetCampaignRecipient(b.ctx, key[0], key[1], key[2])
			}), store.ErrNotFound)
		}
		theirs := c
		theirs.OrgID = b.other.ID
		if got, total := listRecipients(t, b, theirs, store.RecipientFilter{}); len(got) != 0 || total != 0 {
			t.Fatalf("another organization lists %d recipients (%d)", len(got), total)
		}
		due := read(t, b, func(tx store.Tx) ([]model.CampaignRecipient, error) {
			return tx.DueCampaignRecipients(b.ctx, b.other.ID, c.ID, at(0), 10)
		})
		live := read(t, b, func(tx store.Tx) ([]store.RecipientCall, error) { return tx.LiveRecipients(b.ctx, b.other.ID, c.ID) })
		if len(due) != 0 || len(live) != 0 {
			t.Fatalf("another organization sees %d due and %d live recipients", len(due), len(live))
		}
		stolen := rs[0]
		stolen.OrgID = b.other.ID
		after := stolen
		after.Status = model.RecipientCompleted
		if change(t, b, stolen, after) {
			t.Fatal("another organization changed a recipient")
		}
		var moved int
		b.update(t, func(tx store.Tx) (err error) {
			moved, err = tx.FinishRecipients(b.ctx, b.other.ID, c.ID, []string{model.RecipientPending, model.RecipientInProgress},
				model.RecipientCanceled, at(9))
			return err
		})
		wantEqual(t, 0, moved)
		wantEqual(t, rs[0], getRecipient(t, b, rs[0]))
		wantCounts(t, b, c, model.CampaignCounts{Total: 2, Pending: 1, InProgress: 1})
	}},
	{"ChangeRecipient", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		r := addRecipients(t, b, c, recipient("+15550002001"), recipient("+15550002002"))[0]
		call := model.NewID()

		dialed := r
		dialed.Status, dialed.Attempts, dialed.CallIDs, dialed.UpdatedAt = model.RecipientInProgress, 1, []string{call}, at(10)
		if !change(t, b, r, dialed) {
			t.Fatal("a dial did not land")
		}
		wantEqual(t, dialed, getRecipient(t, b, r))
		wantCounts(t, b, c, model.CampaignCounts{Total: 2, Pending: 1, InProgress: 1})

		// A second writer that read the recipient before the dial loses.
		late := r
		late.Status, late.Attempts, late.CallIDs = model.RecipientInProgress, 1, []string{model.NewID()}
		if change(t, b, r, late) {
			t.Fatal("a change from a state the recipient left landed")
		}
		wantEqual(t, dialed, getRecipient(t, b, r))

		// The call ended busy: back to pending, later.
		retry := dialed
		retry.Status, retry.LastHangupCause, retry.NextAttemptAt, retry.UpdatedAt = model.RecipientPending, ptr("BUSY"), ptr(at(3600)), at(20)
		if !change(t, b, dialed, retry) {
			t.Fatal("the retry did not land")
		}
		wantEqual(t, retry, getRecipient(t, b, r))
		wantCounts(t, b, c, model.CampaignCounts{Total: 2, Pending: 2})

		// Same status, attempts guard: pushed to a later window, counts stay.
		later := retry
		later.NextAttemptAt = ptr(at(7200))
		stale := retry
		stale.Attempts = 0
		if change(t, b, stale, later) {
			t.Fatal("a change guarded by stale attempts landed")
		}
		if !change(t, b, retry, later) {
			t.Fatal("a change of the next attempt did not land")
		}
		wantEqual(t, later, getRecipient(t, b, r))
		wantCounts(t, b, c, model.CampaignCounts{Total: 2, Pending: 2})

		// Back to at once (nil), then a second attempt that completes.
		now := later
		now.NextAttemptAt = nil
		if !change(t, b, later, now) {
			t.Fatal("clearing the next attempt did not land")
		}
		wantEqual(t, now, getRecipient(t, b, r))
		second := now
		second.Status, second.Attempts, second.CallIDs = model.RecipientInProgress, 2, []string{call, model.NewID()}
		done := second
		done.Status, done.LastHangupCause = model.RecipientCompleted, ptr("CUSTOMER_HANGUP")
		if !change(t, b, now, second) || !change(t, b, second, done) {
			t.Fatal("the second attempt did not land")
		}
		wantEqual(t, done, getRecipient(t, b, r))
		wantCounts(t, b, c, model.CampaignCounts{Total: 2, Pending: 1, Completed: 1})

		bogus := done
		bogus.Status = "bogus"
		if err := b.writeErr(func(tx store.Tx) error { _, err := tx.ChangeRecipient(b.ctx, &done, &bogus); return err }); err == nil {
			t.Fatal("an unknown status was written")
		}
	}},
	{"ConcurrentChanges", func(t *testing.T, b *bundle) {
		// Servers dialing the same recipient at once: one dial lands. Dials
		// of different recipients all land, and the counts add up.
		c := newCampaign(t, b, b.org.ID)
		rs := make([]model.CampaignRecipient, 12)
		for i := range rs {
			rs[i] = recipient(fmt.Sprintf("+155500020%02d", i))
		}
		addRecipients(t, b, c, rs...)
		dial := func(r model.CampaignRecipient) (bool, string) {
			after := r
			after.Status, after.Attempts, after.CallIDs = model.RecipientInProgress, 1, []string{model.NewID()}
			var ok bool
			err := b.st.Update(b.ctx, func(tx store.Tx) (err error) {
				ok, err = tx.ChangeRecipient(b.ctx, &r, &after)
				return err
			})
			if err != nil {
				t.Error(err)
			}
			return ok, after.CallIDs[0]
		}
		var wg sync.WaitGroup
		var landed atomic.Int32
		var winner atomic.Value
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rs[0]
				if i >= 8 {
					r = rs[i-7] // recipients 1..8, one dial each
				}
				ok, call := dial(r)
				if ok && r.ID == rs[0].ID {
					landed.Add(1)
					winner.Store(call)
				}
			}()
		}
		wg.Wait()
		if n := landed.Load(); n != 1 {
			t.Fatalf("%d of 8 concurrent dials of one recipient landed, want 1", n)
		}
		wantEqual(t, []string{winner.Load().(string)}, getRecipient(t, b, rs[0]).CallIDs)
		wantCounts(t, b, c, model.CampaignCounts{Total: 12, Pending: 3, InProgress: 9})
	}},
	{"Due", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		now := at(1000)
		pending := func(number string, next *time.Time) model.CampaignRecipient {
			return recipient(number, func(r *model.CampaignRecipient) { r.NextAttemptAt = next })
		}
		rs := addRecipients(t, b, c,
			pending("+15550002000", ptr(now.Add(-time.Second))),
			pending("+15550002001", nil),
			pending("+15550002002", ptr(now)),                       // due exactly now
			pending("+15550002003", ptr(now.Add(time.Millisecond))), // not yet
			pending("+15550002004", ptr(now.Add(-time.Hour))),
			pending("+15550002005", nil),
			recipient("+15550002006", func(r *model.CampaignRecipient) { r.Status = model.RecipientInProgress }),
			recipient("+15550002007", func(r *model.CampaignRecipient) { r.Status = model.RecipientSuppressed }),
			pending("+15550002008", ptr(now.Add(-time.Hour))),
		)
		other := newCampaign(t, b, b.org.ID)
		addRecipients(t, b, other, pending("+15550002009", nil))
		due := func(n int) []string {
			return recipientIDs(read(t, b, func(tx store.Tx) ([]model.CampaignRecipient, error) {
				return tx.DueCampaignRecipients(b.ctx, c.OrgID, c.ID, now, n)
			}))
		}
		wantEqual(t, []string{rs[1].ID, rs[5].ID, rs[4].ID, rs[8].ID, rs[0].ID, rs[2].ID}, due(100))
		wantEqual(t, []string{rs[1].ID, rs[5].ID, rs[4].ID}, due(3))
		wantEqual(t, []string{}, due(0))
		got := read(t, b, func(tx store.Tx) ([]model.CampaignRecipient, error) {
			return tx.DueCampaignRecipients(b.ctx, c.OrgID, c.ID, now, 1)
		})
		wantEqual(t, []model.CampaignRecipient{rs[1]}, got)
	}},
	{"Live", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		ringing := newCall(t, b, b.org.ID, c.AgentID, func(call *model.Call) { call.Status, call.CampaignID = model.CallRinging, &c.ID })
		ended := newCall(t, b, b.org.ID, c.AgentID, func(call *model.Call) {
			call.Status, call.HangupCause, call.EndedAt, call.CampaignID = model.CallCompleted, ptr("NO_ANSWER"), ptr(at(30)), &c.ID
		})
		earlier := newCall(t, b, b.org.ID, c.AgentID)
		inProgress := func(number string, calls ...string) model.CampaignRecipient {
			return recipient(number, func(r *model.CampaignRecipient) {
				r.Status, r.Attempts, r.CallIDs = model.RecipientInProgress, len(calls), calls
			})
		}
		lost := model.NewID() // a call that is not there
		rs := addRecipients(t, b, c,
			inProgress("+15550002001", ringing.ID),
			recipient("+15550002002"),
			inProgress("+15550002003", earlier.ID, ended.ID),
			inProgress("+15550002004", lost),
		)
		live := read(t, b, func(tx store.Tx) ([]store.RecipientCall, error) { return tx.LiveRecipients(b.ctx, c.OrgID, c.ID) })
		wantEqual(t, []store.RecipientCall{
			{CampaignRecipient: rs[0], CallStatus: model.CallRinging},
			{CampaignRecipient: rs[2], CallStatus: model.CallCompleted, HangupCause: ptr("NO_ANSWER"), EndedAt: ptr(at(30))},
			{CampaignRecipient: rs[3]},
		}, live)
	}},
	{"Finish", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		with := func(number, status string) model.CampaignRecipient {
			return recipient(number, func(r *model.CampaignRecipient) { r.Status = status })
		}
		rs := addRecipients(t, b, c,
			with("+15550002001", model.RecipientPending),
			with("+15550002002", model.RecipientPending),
			with("+15550002003", model.RecipientInProgress),
			with("+15550002004", model.RecipientCompleted),
			with("+15550002005", model.RecipientSuppressed),
			with("+15550002006", model.RecipientExpired),
		)
		var moved int
		b.update(t, func(tx store.Tx) (err error) {
			moved, err = tx.FinishRecipients(b.ctx, c.OrgID, c.ID,
				[]string{model.RecipientPending, model.RecipientExpired, model.RecipientPending}, model.RecipientExpired, at(50))
			return err
		})
		wantEqual(t, 2, moved)
		got := getRecipient(t, b, rs[0])
		wantEqual(t, model.RecipientExpired, got.Status)
		wantEqual(t, at(50), got.UpdatedAt)
		wantEqual(t, rs[5], getRecipient(t, b, rs[5])) // already expired: untouched
		wantCounts(t, b, c, model.CampaignCounts{Total: 6, InProgress: 1, Completed: 1, Suppressed: 1, Expired: 3})

		b.update(t, func(tx store.Tx) (err error) {
			moved, err = tx.FinishRecipients(b.ctx, c.OrgID, c.ID, []string{model.RecipientPending, model.RecipientInProgress},
				model.RecipientCanceled, at(60))
			return err
		})
		wantEqual(t, 1, moved)
		wantCounts(t, b, c, model.CampaignCounts{Total: 6, Completed: 1, Suppressed: 1, Expired: 3, Canceled: 1})
		b.update(t, func(tx store.Tx) (err error) {
			moved, err = tx.FinishRecipients(b.ctx, c.OrgID, c.ID, []string{model.RecipientPending}, model.RecipientCanceled, at(70))
			return err
		})
		wantEqual(t, 0, moved)
		if err := b.writeErr(func(tx store.Tx) error {
			_, err := tx.FinishRecipients(b.ctx, c.OrgID, c.ID, []string{model.RecipientCompleted}, "bogus", at(80))
			return err
		}); err == nil {
			t.Fatal("recipients were moved to an unknown status")
		}
	}},
}

// DueRecipientsPlan fills a store with two campaigns of perCampaign recipients
// each (half of them pending later, a quarter due at once, the rest done)
// and returns what explain says of DueCampaignRecipients' query (query, as
// sqlstore.DueRecipientsQuery gives it, with its arguments) for one of
// them: the engine's test checks that it reads one index range in order.
func DueRecipientsPlan(t *testing.T, st store.Store, perCampaign int, query string, explain func(query string, args ...any) string) string {
	t.Helper()
	b := &bundle{ctx: t.Context(), st: st}
	org := newOrg(t, b, "plans")
	now := at(0)
	var cs []model.Campaign
	for range 2 {
		c := newCampaign(t, b, org.ID)
		rs := make([]model.CampaignRecipient, perCampaign)
		for i := range rs {
			rs[i] = recipient(fmt.Sprintf("+1557%07d", i))
			switch i % 4 {
			case 0, 1:
				rs[i].NextAttemptAt = ptr(now.Add(time.Duration(i) * time.Second))
			case 2:
				rs[i].Status = model.RecipientCompleted
			}
		}
		addRecipients(t, b, c, rs...)
		cs = append(cs, c)
	}
	return explain(query, org.ID, cs[0].ID, now, 10)
}
