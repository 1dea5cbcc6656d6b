package storetest

import (
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// newCampaign creates a draft campaign of orgID whose agent need not exist
// (campaigns record their agent, they do not reference it).
func newCampaign(t *testing.T, b *bundle, orgID string, mods ...func(*model.Campaign)) model.Campaign {
	t.Helper()
	c := model.Campaign{
		OrgID:   orgID,
		AgentID: model.NewID(),
		Name:    "spring renewals",
		Status:  model.CampaignDraft,
		Config: model.CampaignConfig{
			FromNumbers:    []string{"+15550001000"},
			Timezone:       "UTC",
			CallingWindows: []model.CallingWindow{},
			CallsPerMinute: 60,
			Retry:          model.CampaignRetry{MaxAttempts: 1, DelaySeconds: 3600, RetryOn: []string{model.RetryNoAnswer, model.RetryBusy}},
			Variables:      map[string]any{},
		},
		CreatedAt: at(0),
		UpdatedAt: at(0),
	}
	for _, m := range mods {
		m(&c)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateCampaign(b.ctx, &c) })
	return c
}

func getCampaign(t *testing.T, b *bundle, orgID, id string) model.Campaign {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.Campaign, error) { return tx.GetCampaign(b.ctx, orgID, id) })
}

// listCampaignIDs lists the ids of a page of orgID's campaigns, and the total.
func listCampaignIDs(t *testing.T, b *bundle, orgID string, f store.CampaignFilter) ([]string, int) {
	t.Helper()
	var ids []string
	var total int
	err := b.view(func(tx store.Tx) error {
		cs, n, err := tx.ListCampaigns(b.ctx, orgID, f)
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		total = n
		return err
	})
	if err != nil {
		t.Fatalf("list campaigns: %v", err)
	}
	return ids, total
}

var campaignTests = []test{
	{"CreateGet", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID, func(c *model.Campaign) {
			c.Description = ptr("Customers whose plan ends in April.")
			c.StartAt, c.EndAt = ptr(at(3600)), ptr(at(7200))
			c.Config.FromNumbers = []string{"+15550001000", "+442071838750"}
			c.Config.Timezone = "America/Chicago"
			c.Config.CallingWindows = []model.CallingWindow{{Days: []string{"mon", "tue"}, Start: "09:00", End: "17:30"}}
			c.Config.MaxConcurrency = ptr(5)
			c.Config.CallsPerMinute = 30
			c.Config.Variables = map[string]any{"company": "Acme", "nested": map[string]any{"tier": "gold"}}
			c.Config.WebhookURL = ptr("https://example.com/campaigns")
			c.Counts = model.CampaignCounts{Total: 99, Pending: 99} // the store keeps counts: a new campaign has none
			c.NextDialAt = at(10)
			c.WebhookStatus = ptr("sent")
		})
		wantEqual(t, model.CampaignCounts{}, c.Counts)
		wantEqual(t, c, getCampaign(t, b, b.org.ID, c.ID))
		got := read(t, b, func(tx store.Tx) (model.Campaign, error) { return tx.GetCampaignForUpdate(b.ctx, b.org.ID, c.ID) })
		wantEqual(t, c, got)
		var locked model.Campaign
		b.update(t, func(tx store.Tx) (err error) {
			locked, err = tx.GetCampaignForUpdate(b.ctx, b.org.ID, c.ID)
			return err
		})
		wantEqual(t, c, locked)
	}},
	{"FillsIDAndTimes", func(t *testing.T, b *bundle) {
		c := model.Campaign{OrgID: b.org.ID, AgentID: model.NewID(), Name: "n", Status: model.CampaignDraft}
		before := model.Now()
		b.update(t, func(tx store.Tx) error { return tx.CreateCampaign(b.ctx, &c) })
		if !model.IsUUID(c.ID) || c.CreatedAt.Before(before) || c.UpdatedAt.Before(before) {
			t.Fatalf("id %q, times %v %v: want a UUID and now", c.ID, c.CreatedAt, c.UpdatedAt)
		}
		got := getCampaign(t, b, b.org.ID, c.ID)
		wantEqual(t, c, got)
		if !got.NextDialAt.IsZero() || got.StartAt != nil || got.DispatchOwner != nil || got.WebhookStatus != nil {
			t.Fatalf("unset fields came back set: %+v", got)
		}
	}},
	{"TenantIsolation", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		for _, id := range []string{c.ID, model.NewID(), "not-a-uuid"} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Campaign, error) { return tx.GetCampaign(b.ctx, b.other.ID, id) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				_, err := tx.GetCampaignForUpdate(b.ctx, b.other.ID, id)
				return err
			}), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteCampaign(b.ctx, b.other.ID, id) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.PaceCampaign(b.ctx, b.other.ID, id, at(5)) }), store.ErrNotFound)
		}
		stolen := c
		stolen.OrgID, stolen.Name = b.other.ID, "stolen"
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateCampaign(b.ctx, &stolen) }), store.ErrNotFound)
		ids, total := listCampaignIDs(t, b, b.other.ID, store.CampaignFilter{})
		if len(ids) != 0 || total != 0 {
			t.Fatalf("the other organization lists %v (%d)", ids, total)
		}
		var ok bool
		b.update(t, func(tx store.Tx) (err error) {
			ok, err = tx.ClaimCampaignDispatch(b.ctx, b.other.ID, c.ID, "node-a", at(0), at(60))
			return err
		})
		if ok {
			t.Fatal("another organization's campaign was claimed")
		}
		wantEqual(t, c, getCampaign(t, b, b.org.ID, c.ID))
	}},
	{"List", func(t *testing.T, b *bundle) {
		agent := model.NewID()
		var ids []string
		for i, status := range []string{model.CampaignDraft, model.CampaignRunning, model.CampaignDraft, model.CampaignCompleted} {
			c := newCampaign(t, b, b.org.ID, func(c *model.Campaign) {
				c.Status, c.CreatedAt = status, at(i)
				if i%2 == 0 {
					c.AgentID = agent
				}
			})
			ids = append(ids, c.ID)
		}
		newCampaign(t, b, b.other.ID)

		got, total := listCampaignIDs(t, b, b.org.ID, store.CampaignFilter{})
		wantEqual(t, []string{ids[3], ids[2], ids[1], ids[0]}, got)
		wantEqual(t, 4, total)
		got, _ = listCampaignIDs(t, b, b.org.ID, store.CampaignFilter{Page: store.Page{SortDir: store.Asc}})
		wantEqual(t, ids, got)
		got, total = listCampaignIDs(t, b, b.org.ID, store.CampaignFilter{Page: store.Page{Number: 2, Size: 3}})
		wantEqual(t, []string{ids[0]}, got)
		wantEqual(t, 4, total)
		got, total = listCampaignIDs(t, b, b.org.ID, store.CampaignFilter{Status: model.CampaignDraft})
		wantEqual(t, []string{ids[2], ids[0]}, got)
		wantEqual(t, 2, total)
		got, total = listCampaignIDs(t, b, b.org.ID, store.CampaignFilter{AgentID: agent, Status: model.CampaignDraft, Page: store.Page{SortDir: store.Asc}})
		wantEqual(t, []string{ids[0], ids[2]}, got)
		wantEqual(t, 2, total)
		got, total = listCampaignIDs(t, b, b.org.ID, store.CampaignFilter{AgentID: "not-a-uuid"})
		if len(got) != 0 || total != 0 {
			t.Fatalf("an agent id that is no UUID lists %v (%d)", got, total)
		}
	}},
	{"Update", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID, func(c *model.Campaign) { c.Config.WebhookURL = ptr("https://example.com/a") })
		addRecipients(t, b, c, recipient("+15550002001"), recipient("+15550002002"))
		c.Counts = model.CampaignCounts{Total: 2, Pending: 2}
		wantEqual(t, c, getCampaign(t, b, b.org.ID, c.ID))

		b.update(t, func(tx store.Tx) error {
			got, err := tx.GetCampaignForUpdate(b.ctx, c.OrgID, c.ID)
			if err != nil {
				return err
			}
			got.AgentID = model.NewID()
			got.Name, got.Description = "renamed", ptr("now described")
			got.Status = model.CampaignRunning
			got.StartAt, got.EndAt = ptr(at(100)), ptr(at(200))
			got.Config.CallsPerMinute = 6000
			got.Config.WebhookURL = nil
			got.Counts = model.CampaignCounts{Total: 7} // not the caller's to write
			got.CreatedAt = at(999)                     // nor this
			got.UpdatedAt = at(50)
			got.StartedAt, got.CompletedAt = ptr(at(60)), ptr(at(70))
			got.NextDialAt = at(61)
			got.DispatchOwner, got.DispatchUntil = ptr("node-a"), ptr(at(90))
			got.WebhookStatus = ptr("skipped")
			if err := tx.UpdateCampaign(b.ctx, &got); err != nil {
				return err
			}
			got.Counts, got.CreatedAt = c.Counts, c.CreatedAt
			c = got
			return nil
		})
		wantEqual(t, c, getCampaign(t, b, b.org.ID, c.ID))
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			ghost := c
			ghost.ID = model.NewID()
			return tx.UpdateCampaign(b.ctx, &ghost)
		}), store.ErrNotFound)
	}},
	{"DeleteCascades", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		kept := newCampaign(t, b, b.org.ID)
		rs := addRecipients(t, b, c, recipient("+15550002001"), recipient("+15550002002"))
		addRecipients(t, b, kept, recipient("+15550002001"))
		call := newCall(t, b, b.org.ID, c.AgentID, func(call *model.Call) { call.CampaignID = &c.ID })
		b.update(t, func(tx store.Tx) error { return tx.DeleteCampaign(b.ctx, b.org.ID, c.ID) })

		wantIs(t, readErr(b, func(tx store.Tx) (model.Campaign, error) { return tx.GetCampaign(b.ctx, b.org.ID, c.ID) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.CampaignRecipient, error) {
			return tx.GetCampaignRecipient(b.ctx, b.org.ID, c.ID, rs[0].ID)
		}), store.ErrNotFound)
		if got, total := listRecipients(t, b, c, store.RecipientFilter{}); len(got) != 0 || total != 0 {
			t.Fatalf("a deleted campaign lists %d recipients (%d)", len(got), total)
		}
		wantEqual(t, &c.ID, getCall(t, b, b.org.ID, call.ID).CampaignID)
		wantEqual(t, 1, getCampaign(t, b, b.org.ID, kept.ID).Counts.Total)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteCampaign(b.ctx, b.org.ID, c.ID) }), store.ErrNotFound)
	}},
	{"ActiveCampaigns", func(t *testing.T, b *bundle) {
		hook := func(c *model.Campaign) { c.Config.WebhookURL = ptr("https://example.com/done") }
		with := func(status string, i int, mods ...func(*model.Campaign)) func(*model.Campaign) {
			return func(c *model.Campaign) {
				c.Status, c.CreatedAt = status, at(i)
				for _, m := range mods {
					m(c)
				}
			}
		}
		running := newCampaign(t, b, b.org.ID, with(model.CampaignRunning, 3))
		theirs := newCampaign(t, b, b.other.ID, with(model.CampaignRunning, 1))
		owed := newCampaign(t, b, b.org.ID, with(model.CampaignCompleted, 2, hook))
		canceledOwed := newCampaign(t, b, b.org.ID, with(model.CampaignCanceled, 4, hook))
		newCampaign(t, b, b.org.ID, with(model.CampaignCompleted, 0))                                                                  // no webhook
		newCampaign(t, b, b.org.ID, with(model.CampaignCompleted, 0, hook, func(c *model.Campaign) { c.WebhookStatus = ptr("sent") })) // delivered
		newCampaign(t, b, b.org.ID, with(model.CampaignDraft, 0, hook))
		newCampaign(t, b, b.org.ID, with(model.CampaignPaused, 0, hook)) // nothing live
		pausedLive := newCampaign(t, b, b.org.ID, with(model.CampaignPaused, 5))
		r := addRecipients(t, b, pausedLive, recipient("+14155550100"))[0]
		r = getRecipient(t, b, r)
		live := r
		live.Status, live.Attempts = model.RecipientInProgress, 1
		if !change(t, b, r, live) {
			t.Fatal("the recipient did not move")
		}

		active := func(n int) []string {
			cs := read(t, b, func(tx store.Tx) ([]model.Campaign, error) { return tx.ActiveCampaigns(b.ctx, n) })
			var ids []string
			for _, c := range cs {
				ids = append(ids, c.ID)
			}
			return ids
		}
		wantEqual(t, []string{theirs.ID, owed.ID, running.ID, canceledOwed.ID, pausedLive.ID}, active(10))
		wantEqual(t, []string{theirs.ID, owed.ID}, active(2))

		// Delivered: no longer owed. Finished: no longer running.
		b.update(t, func(tx store.Tx) error {
			owed.WebhookStatus = ptr("failed")
			if err := tx.UpdateCampaign(b.ctx, &owed); err != nil {
				return err
			}
			theirs.Status = model.CampaignCompleted
			return tx.UpdateCampaign(b.ctx, &theirs)
		})
		wantEqual(t, []string{running.ID, canceledOwed.ID, pausedLive.ID}, active(10))

		// Its call's outcome recorded: nothing left for a dispatcher.
		done := live
		done.Status = model.RecipientCompleted
		if !change(t, b, live, done) {
			t.Fatal("the recipient did not settle")
		}
		wantEqual(t, []string{running.ID, canceledOwed.ID}, active(10))
	}},
	{"ClaimDispatch", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		now := at(0)
		claim := func(owner string, at time.Time) bool {
			t.Helper()
			var ok bool
			b.update(t, func(tx store.Tx) (err error) {
				ok, err = tx.ClaimCampaignDispatch(b.ctx, c.OrgID, c.ID, owner, at, at.Add(time.Minute))
				return err
			})
			return ok
		}
		if !claim("node-a", now) {
			t.Fatal("a free campaign was not claimed")
		}
		got := getCampaign(t, b, c.OrgID, c.ID)
		wantEqual(t, ptr("node-a"), got.DispatchOwner)
		wantEqual(t, ptr(now.Add(time.Minute)), got.DispatchUntil)
		if claim("node-b", now.Add(30*time.Second)) {
			t.Fatal("node-b took a campaign node-a holds")
		}
		if !claim("node-a", now.Add(30*time.Second)) {
			t.Fatal("node-a could not renew its own hold")
		}
		if claim("node-b", now.Add(90*time.Second)) { // node-a's renewed hold lasts until now+90s
			t.Fatal("node-b took the hold the moment it ended, not after")
		}
		if !claim("node-b", now.Add(91*time.Second)) {
			t.Fatal("node-b could not take a hold that had ended")
		}
		wantEqual(t, ptr("node-b"), getCampaign(t, b, c.OrgID, c.ID).DispatchOwner)
		var ok bool
		b.update(t, func(tx store.Tx) (err error) {
			ok, err = tx.ClaimCampaignDispatch(b.ctx, c.OrgID, model.NewID(), "node-a", now, now)
			return err
		})
		if ok {
			t.Fatal("a campaign that does not exist was claimed")
		}
	}},
	{"Pace", func(t *testing.T, b *bundle) {
		c := newCampaign(t, b, b.org.ID)
		b.update(t, func(tx store.Tx) error {
			return tx.PaceCampaign(b.ctx, c.OrgID, c.ID, at(42).Add(1500*time.Microsecond))
		})
		c.NextDialAt = at(42).Add(time.Millisecond) // to the millisecond, as every time
		wantEqual(t, c, getCampaign(t, b, c.OrgID, c.ID))
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.PaceCampaign(b.ctx, c.OrgID, model.NewID(), at(1)) }), store.ErrNotFound)
	}},
	{"CallsByCampaign", func(t *testing.T, b *bundle) {
		c, d := newCampaign(t, b, b.org.ID), newCampaign(t, b, b.org.ID)
		mine := []model.Call{
			newCall(t, b, b.org.ID, c.AgentID, func(call *model.Call) { call.CampaignID, call.CreatedAt = &c.ID, at(1) }),
			newCall(t, b, b.org.ID, c.AgentID, func(call *model.Call) { call.CampaignID, call.CreatedAt = &c.ID, at(2) }),
		}
		newCall(t, b, b.org.ID, d.AgentID, func(call *model.Call) { call.CampaignID = &d.ID })
		plain := newCall(t, b, b.org.ID, c.AgentID)
		newCall(t, b, b.other.ID, c.AgentID, func(call *model.Call) { call.CampaignID = &c.ID }) // not possible through the API; still not mine

		wantEqual(t, mine[0], getCall(t, b, b.org.ID, mine[0].ID))
		wantEqual(t, (*string)(nil), getCall(t, b, b.org.ID, plain.ID).CampaignID)
		list := func(orgID, campaignID string) ([]model.Call, int) {
			var calls []model.Call
			var total int
			err := b.view(func(tx store.Tx) (err error) {
				calls, total, err = tx.ListCalls(b.ctx, orgID, store.CallFilter{CampaignID: campaignID, Page: store.Page{SortDir: store.Asc}})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return calls, total
		}
		got, total := list(b.org.ID, c.ID)
		wantEqual(t, mine, got)
		wantEqual(t, 2, total)
		if got, total := list(b.org.ID, "not-a-uuid"); len(got) != 0 || total != 0 {
			t.Fatalf("campaign id that is no UUID lists %d calls (%d)", len(got), total)
		}

		// A call's campaign is written once: updates leave it.
		moved := mine[0]
		moved.CampaignID = &d.ID
		moved.Status = model.CallFailed
		b.update(t, func(tx store.Tx) error { return tx.UpdateCall(b.ctx, &moved) })
		wantEqual(t, &c.ID, getCall(t, b, b.org.ID, moved.ID).CampaignID)
	}},
}
