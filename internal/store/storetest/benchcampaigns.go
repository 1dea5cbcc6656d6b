package storetest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// BenchRecipients is how many recipients the campaign benchmarks seed:
// PARLEY_BENCH_RECIPIENTS, default 100,000 (a CSV upload's limit).
func BenchRecipients(b *testing.B) int {
	b.Helper()
	v := os.Getenv("PARLEY_BENCH_RECIPIENTS")
	if v == "" {
		return 100_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 {
		b.Fatalf("PARLEY_BENCH_RECIPIENTS=%q: want a number above 1", v)
	}
	return n
}

// duePage is the dispatcher's page of due recipients (campaign.duePage).
const duePage = 250

// benchCampaign creates a draft campaign in org for a benchmark.
func benchCampaign(b *testing.B, st store.Store, orgID string) model.Campaign {
	b.Helper()
	ctx := b.Context()
	c := model.Campaign{
		OrgID: orgID, AgentID: model.NewID(), Name: "bench", Status: model.CampaignDraft,
		Config: model.CampaignConfig{
			FromNumbers: []string{"+14155550100"}, Timezone: "UTC", CallingWindows: []model.CallingWindow{}, CallsPerMinute: 1000,
			Retry:     model.CampaignRetry{MaxAttempts: 1, DelaySeconds: 3600, RetryOn: []string{model.RetryNoAnswer, model.RetryBusy}},
			Variables: map[string]any{},
		},
	}
	if err := st.Update(ctx, func(tx store.Tx) error { return tx.CreateCampaign(ctx, &c) }); err != nil {
		b.Fatal(err)
	}
	return c
}

// benchRecipients are n pending recipients as an upload makes them: a
// number, three variables, every tenth with its own timezone; the first
// parked of them wait until next.
func benchRecipients(n, parked int, next time.Time) []model.CampaignRecipient {
	chicago := "America/Chicago"
	plans := []string{"gold", "silver", "bronze"}
	rs := make([]model.CampaignRecipient, n)
	for i := range rs {
		rs[i] = model.CampaignRecipient{ID: model.NewID(), ToNumber: fmt.Sprintf("+1415%07d", 2000000+i), Status: model.RecipientPending,
			Variables: map[string]any{"firstName": fmt.Sprintf("Customer %d", i), "plan": plans[i%3], "accountId": fmt.Sprintf("ACC-%06d", i)}}
		if i%10 == 0 {
			rs[i].Timezone = &chicago
		}
		if i < parked {
			rs[i].NextAttemptAt = &next
		}
	}
	return rs
}

// addInBatches stores rs in transactions of 10,000.
func addInBatches(b *testing.B, st store.Store, c model.Campaign, rs []model.CampaignRecipient) {
	b.Helper()
	ctx := b.Context()
	for start := 0; start < len(rs); start += 10_000 {
		part := rs[start:min(start+10_000, len(rs))]
		if err := st.Update(ctx, func(tx store.Tx) error {
			_, _, err := tx.AddCampaignRecipients(ctx, c.OrgID, c.ID, part)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchDueCampaignRecipients measures the dispatcher's read of due
// recipients (a page of 250, in its own read transaction) in campaigns of
// 1,000 and BenchRecipients pending recipients, and in one of
// BenchRecipients whose first half (in dial order) is parked a day ahead,
// as recipients outside their calling window are: the cost must not grow
// with the list, nor with what is parked. prepare (nil: none) runs once the
// data is loaded (statistics, a checkpoint).
func BenchDueCampaignRecipients(b *testing.B, st store.Store, prepare func(context.Context) error) {
	ctx := b.Context()
	n := BenchRecipients(b)
	org := model.Organization{Name: "bench", ConcurrencyLimit: 100}
	if err := st.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &org) }); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	cases := []struct {
		name         string
		rows, parked int
		campaign     model.Campaign
	}{
		{name: "1000", rows: 1000},
		{name: strconv.Itoa(n), rows: n},
		{name: strconv.Itoa(n) + "_half_parked", rows: n, parked: n / 2},
	}
	for i := range cases {
		c := &cases[i]
		c.campaign = benchCampaign(b, st, org.ID)
		addInBatches(b, st, c.campaign, benchRecipients(c.rows, c.parked, now.Add(24*time.Hour)))
	}
	if prepare != nil {
		if err := prepare(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				due, err := store.Read(ctx, st, func(tx store.Tx) ([]model.CampaignRecipient, error) {
					return tx.DueCampaignRecipients(ctx, org.ID, c.campaign.ID, now, duePage)
				})
				if err != nil {
					b.Fatal(err)
				}
				if len(due) != min(duePage, c.rows-c.parked) || (c.parked > 0 && due[0].NextAttemptAt != nil) {
					b.Fatalf("%d due, want %d not parked", len(due), min(duePage, c.rows-c.parked))
				}
			}
		})
	}
}

// BenchAddCampaignRecipients measures storing BenchRecipients recipients
// (three variables each, every tenth with its timezone) in one
// transaction, as one CSV upload does, each time into a new campaign; it
// reports rows per second.
func BenchAddCampaignRecipients(b *testing.B, st store.Store) {
	ctx := b.Context()
	n := BenchRecipients(b)
	org := model.Organization{Name: "bench", ConcurrencyLimit: 100}
	if err := st.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &org) }); err != nil {
		b.Fatal(err)
	}
	var took time.Duration
	for range b.N {
		b.StopTimer()
		c := benchCampaign(b, st, org.ID)
		rs := benchRecipients(n, 0, time.Time{})
		b.StartTimer()
		t0 := time.Now()
		var added int
		if err := st.Update(ctx, func(tx store.Tx) (err error) {
			added, _, err = tx.AddCampaignRecipients(ctx, org.ID, c.ID, rs)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		took += time.Since(t0)
		if added != n {
			b.Fatalf("added %d of %d", added, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/took.Seconds(), "rows/s")
}
