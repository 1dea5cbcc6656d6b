package campaign

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

func numbers(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%04d", prefix, i)
	}
	return out
}

// A list with answered, busy and unanswered numbers runs to its end: busy
// and unanswered ones are tried again, never before the delay and never
// beyond maxAttempts, each attempt is one call, and the campaign completes
// and says so once.
func TestCampaignRunsToTheEnd(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		nums := numbers(40, "+1415555") // last digits 0..9 in turn; none ends in 9 after filtering
		var list []string
		for _, n := range nums {
			if n[len(n)-1] != '9' {
				list = append(list, n)
			}
		}
		url := "https://hooks.example.com/campaigns"
		c := r.campaign(list, func(c *model.Campaign) {
			c.Config.Retry = model.CampaignRetry{MaxAttempts: 3, DelaySeconds: 60, RetryOn: []string{model.RetryBusy}}
			c.Config.WebhookURL = &url
		})
		for round := 0; round < 60 && r.get(c.ID).Status == model.CampaignRunning; round++ {
			r.d.pass(r.ctx)
			r.settled(0)
			r.clock.Add(10 * time.Second)
		}
		for n, at := range r.dials.times() {
			for i := 1; i < len(at); i++ {
				if gap := at[i].Sub(at[i-1]); gap < time.Minute {
					t.Errorf("%s dialed again %s after its last attempt; the delay is 60 s", n, gap)
				}
			}
		}
		got := r.get(c.ID)
		if got.Status != model.CampaignCompleted || got.CompletedAt == nil {
			t.Fatalf("campaign = %s, counts %+v", got.Status, got.Counts)
		}
		// 36 numbers: digits 0–5 answer (24), 6–7 busy (8: retried), 8 no answer (4: not in retryOn).
		want := model.CampaignCounts{Total: 36, Completed: 24, Failed: 12}
		if got.Counts != want {
			t.Errorf("counts = %+v, want %+v", got.Counts, want)
		}
		for _, rc := range r.recipients(c.ID) {
			last := rc.ToNumber[len(rc.ToNumber)-1]
			wantAttempts := 1
			if last == '6' || last == '7' {
				wantAttempts = 3
			}
			if rc.Attempts != wantAttempts || len(rc.CallIDs) != wantAttempts || r.dials.of(rc.ToNumber) != wantAttempts {
				t.Errorf("%s: attempts %d, calls %d, dialed %d; want %d", rc.ToNumber, rc.Attempts, len(rc.CallIDs), r.dials.of(rc.ToNumber), wantAttempts)
			}
			if rc.LastHangupCause == nil {
				t.Errorf("%s: no lastHangupCause", rc.ToNumber)
			}
		}
		if calls := r.campaignCalls(c.ID); len(calls) != 24+8*3+4 {
			t.Errorf("%d calls carry the campaign's id", len(calls))
		}
		r.eventually("campaign_completed", func() bool { return len(r.hooks.deliveries()) == 1 })
		r.d.pass(r.ctx)
		d := r.hooks.deliveries()
		if len(d) != 1 || d[0].Event != webhook.EventCampaignCompleted || d[0].URL != url || d[0].Secret != "s3cret" {
			t.Fatalf("deliveries = %+v", d)
		}
		e := decode(t, d[0].Body)
		camp, _ := e["campaign"].(map[string]any)
		counts, _ := camp["counts"].(map[string]any)
		if e["event"] != "campaign_completed" || camp["id"] != c.ID || camp["status"] != model.CampaignCompleted ||
			counts["completed"] != float64(want.Completed) || counts["failed"] != float64(want.Failed) || counts["total"] != float64(want.Total) {
			t.Errorf("body = %v", e)
		}
		r.eventually("delivery recorded", func() bool {
			s := r.get(c.ID).WebhookStatus
			return s != nil && *s == model.WebhookSent
		})
	})
}

// Campaigns together leave the inbound reserve free, each stays under its
// maxConcurrency, and API calls still find a line.
func TestLinesKeptForInboundAndAPICalls(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10) // 20 % reserved: campaigns use 8 lines
		five := 5
		a := r.campaign(ringingNumbers(20, "+141555600"), func(c *model.Campaign) { c.Config.MaxConcurrency = &five })
		b := r.campaign(ringingNumbers(20, "+141555700"), nil)
		r.d.pass(r.ctx)
		r.d.pass(r.ctx)
		if got := r.get(a.ID).Counts.InProgress; got != 5 {
			t.Errorf("campaign a holds %d lines, maxConcurrency 5", got)
		}
		if got := r.get(b.ID).Counts.InProgress; got != 3 {
			t.Errorf("campaign b holds %d lines, 3 are left of the 8 campaigns may use", got)
		}
		if live := r.live(); live != 8 {
			t.Errorf("%d lines held, want the campaigns' 8", live)
		}
		// The two reserved lines take API calls; then the organization is full.
		for i := range 3 {
			c := model.Call{ID: model.NewID(), OrgID: r.org.ID, AgentID: r.agent.ID, AgentName: r.agent.Name, Direction: model.Outbound,
				FromNumber: "+14155550100", ToNumber: fmt.Sprintf("+141555800%d9", i), Variables: map[string]any{}, Prompt: "P",
				Transcript: []map[string]any{}, Metrics: map[string]any{}}
			err := r.queue.Place(r.ctx, &c, true)
			if i < 2 && err != nil {
				t.Fatalf("API call %d with campaigns running: %v", i, err)
			}
			if i == 2 && err == nil {
				t.Fatal("an 11th line was taken")
			}
		}
	})
}

// ringingNumbers are n numbers that ring until canceled (they end in 9).
func ringingNumbers(n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d9", prefix, i)
	}
	return out
}

// callsPerMinute paces dials: one second's worth at once, then one per
// interval.
func TestCallsPerMinutePaceDials(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		c := r.campaign(numbers(30, "+1415559"), func(c *model.Campaign) { c.Config.CallsPerMinute = 60 })
		r.d.pass(r.ctx)
		r.settled(0)
		if n := len(r.campaignCalls(c.ID)); n != 1 {
			t.Fatalf("%d dials in the first instant at 60/min", n)
		}
		r.d.pass(r.ctx)
		if n := len(r.campaignCalls(c.ID)); n != 1 {
			t.Fatalf("%d dials at the same instant", n)
		}
		r.clock.Add(time.Second)
		r.d.pass(r.ctx)
		if n := len(r.campaignCalls(c.ID)); n != 2 {
			t.Fatalf("%d dials a second later", n)
		}
		r.clock.Add(10 * time.Minute) // idle time does not save up more than the burst
		r.d.pass(r.ctx)
		if n := len(r.campaignCalls(c.ID)); n != 3 {
			t.Fatalf("%d dials after a long pause", n)
		}
	})
}

// Recipients are called only inside the window in their own local time:
// the rest are parked until it opens, and cost nothing until then.
func TestWindowsInTheRecipientsTime(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		// 13:00 UTC on a Wednesday in July: 09:00 in New York, 06:00 in Los
		// Angeles, 22:00 in Tokyo.
		r.clock.Set(time.Date(2026, 7, 1, 13, 0, 0, 0, time.UTC))
		ny, la, tokyo := "+12125550100", "+13105550100", "+12125550110"
		var list []string
		list = append(list, ny, la, tokyo)
		for i := range 300 { // Los Angeles numbers, all outside the window
			list = append(list, fmt.Sprintf("+1310555%04d", 1000+i*10))
		}
		r.zones = map[string]string{tokyo: "Asia/Tokyo"} // a New York number whose owner lives in Tokyo
		c := r.campaign(list, func(c *model.Campaign) {
			c.Config.CallingWindows = []model.CallingWindow{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00"}}
		})
		r.d.pass(r.ctx)
		r.settled(0)
		if r.dials.of(ny) != 1 || r.dials.of(la) != 0 || r.dials.of(tokyo) != 0 {
			t.Fatalf("dialed ny %d, la %d, tokyo %d", r.dials.of(ny), r.dials.of(la), r.dials.of(tokyo))
		}
		parkedUntil := map[string]time.Time{
			la:    time.Date(2026, 7, 1, 16, 0, 0, 0, time.UTC), // 09:00 PDT
			tokyo: time.Date(2026, 7, 2, 0, 0, 0, 0, time.UTC),  // 09:00 JST on Thursday
		}
		for _, rc := range r.recipients(c.ID) {
			if want, ok := parkedUntil[rc.ToNumber]; ok && (rc.NextAttemptAt == nil || !rc.NextAttemptAt.Equal(want)) {
				t.Errorf("%s parked until %v, want %v", rc.ToNumber, rc.NextAttemptAt, want)
			}
		}
		// Parked recipients are not due: a second pass reads none of them.
		due, err := store.Read(r.ctx, r.st, func(tx store.Tx) ([]model.CampaignRecipient, error) {
			return tx.DueCampaignRecipients(r.ctx, r.org.ID, c.ID, r.clock.Now(), 1000)
		})
		r.must(err)
		if len(due) != 0 {
			t.Errorf("%d recipients still due after parking", len(due))
		}
		r.clock.Set(time.Date(2026, 7, 1, 16, 0, 0, 0, time.UTC))
		r.d.pass(r.ctx)
		r.settled(0)
		if r.dials.of(la) != 1 {
			t.Errorf("la dialed %d times once its window opened", r.dials.of(la))
		}
	})
}

// A number suppressed after it was added is never dialed.
func TestSuppressionBeforeTheDial(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		c := r.campaign([]string{"+14155551000", "+14155551001"}, nil)
		s := model.Suppression{ID: model.NewID(), OrgID: r.org.ID, Number: "+14155551001", CreatedAt: model.Now()}
		r.must(r.st.Update(r.ctx, func(tx store.Tx) error { return tx.CreateSuppression(r.ctx, &s) }))
		r.d.pass(r.ctx)
		r.settled(0)
		r.d.pass(r.ctx)
		if r.dials.of("+14155551001") != 0 {
			t.Fatal("a suppressed number was dialed")
		}
		got := r.get(c.ID)
		if got.Counts.Suppressed != 1 || got.Counts.Completed != 1 || got.Status != model.CampaignCompleted {
			t.Errorf("campaign %s counts %+v", got.Status, got.Counts)
		}
	})
}

// Nothing is dialed before startAt; at endAt what is left expires.
func TestStartAtAndEndAt(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		start := r.clock.Now().Add(time.Hour)
		end := start.Add(time.Hour)
		c := r.campaign(numbers(20, "+1415556"), func(c *model.Campaign) {
			c.StartAt, c.EndAt = &start, &end
			c.Config.CallsPerMinute = 1 // one dial, then the pace holds the rest
		})
		r.d.pass(r.ctx)
		if r.dials.total() != 0 {
			t.Fatal("dialed before startAt")
		}
		r.clock.Set(start)
		r.d.pass(r.ctx)
		r.settled(0)
		if r.dials.total() != 1 {
			t.Fatalf("%d dials at startAt", r.dials.total())
		}
		r.clock.Set(end)
		r.d.pass(r.ctx)
		got := r.get(c.ID)
		if got.Status != model.CampaignCompleted || got.Counts.Expired != 19 || got.Counts.Pending != 0 {
			t.Errorf("at endAt: %s %+v", got.Status, got.Counts)
		}
	})
}

// Two servers plan one campaign: only the one holding its dispatch dials,
// and a dial planned on a stale read is refused whole (no call stored).
func TestTwoDispatchersDialEachAttemptOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		other := r.dispatcher("node-b")
		c := r.campaign(numbers(6, "+1415557"), nil)
		stale := r.recipients(c.ID)[0]
		r.d.pass(r.ctx)
		other.pass(r.ctx)
		r.settled(0)
		if r.dials.total() != 6 {
			t.Fatalf("%d dials for 6 numbers", r.dials.total())
		}
		a := r.agent
		err := other.place(r.ctx, r.get(c.ID), a, stale, r.clock.Now())
		if err == nil {
			t.Fatal("a stale recipient was dialed again")
		}
		if n := len(r.campaignCalls(c.ID)); n != 6 {
			t.Errorf("%d calls stored", n)
		}
	})
}

// A campaign whose agent is disabled pauses instead of calling.
func TestDisabledAgentPausesTheCampaign(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		c := r.campaign(numbers(3, "+1415557"), nil)
		r.agent.Status = model.AgentDisabled
		r.must(r.st.Update(r.ctx, func(tx store.Tx) error { return tx.UpdateAgent(r.ctx, &r.agent) }))
		r.d.pass(r.ctx)
		if got := r.get(c.ID); got.Status != model.CampaignPaused || r.dials.total() != 0 {
			t.Errorf("campaign %s after its agent was disabled, %d dials", got.Status, r.dials.total())
		}
	})
}

// A paused campaign dials no one, but the calls it left live are settled
// when they end.
func TestPausedCampaignSettlesItsLiveCalls(t *testing.T) {
	eachEngine(t, func(t *testing.T, st store.Store) {
		r := newRig(t, st, 10)
		c := r.campaign(ringingNumbers(2, "+141555600"), func(c *model.Campaign) { c.Config.CallsPerMinute = 1 })
		r.d.pass(r.ctx)
		if got := r.get(c.ID).Counts.InProgress; got != 1 {
			t.Fatalf("%d in progress", got)
		}
		r.must(r.st.Update(r.ctx, func(tx store.Tx) error {
			cur, err := tx.GetCampaignForUpdate(r.ctx, r.org.ID, c.ID)
			if err != nil {
				return err
			}
			cur.Status = model.CampaignPaused
			return tx.UpdateCampaign(r.ctx, &cur)
		}))
		call := r.campaignCalls(c.ID)[0]
		if _, err := r.queue.Cancel(r.ctx, r.org.ID, call.ID); err != nil {
			t.Fatal(err)
		}
		r.settled(0)
		r.clock.Add(time.Hour)
		r.d.pass(r.ctx)
		got := r.get(c.ID)
		if got.Status != model.CampaignPaused || got.Counts.InProgress != 0 || got.Counts.Failed != 1 || got.Counts.Pending != 1 {
			t.Errorf("paused campaign after its call ended: %s %+v", got.Status, got.Counts)
		}
		if n := len(r.campaignCalls(c.ID)); n != 1 {
			t.Errorf("a paused campaign placed %d calls", n)
		}
	})
}
