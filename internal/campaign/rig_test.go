package campaign

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/enginetest"
	"github.com/parley-voice/parley/internal/webhook"
)

// clock is a test's time: it moves only when the test moves it.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// hooks records campaign_completed deliveries.
type hooks struct {
	mu   sync.Mutex
	got  []webhook.Delivery
	sent chan struct{}
}

func (h *hooks) Deliver(_ context.Context, d webhook.Delivery) webhook.Result {
	h.mu.Lock()
	h.got = append(h.got, d)
	h.mu.Unlock()
	select {
	case h.sent <- struct{}{}:
	default:
	}
	return webhook.Result{Sent: true, StatusCode: 200}
}

func (h *hooks) deliveries() []webhook.Delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhook.Delivery(nil), h.got...)
}

// dials counts the calls the dialer saw per number.
type dials struct {
	mu  sync.Mutex
	per map[string]int
	at  map[string][]time.Time // on the test's clock
}

func (d *dials) add(to string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.per[to]++
	d.at[to] = append(d.at[to], at)
}

func (d *dials) times() map[string][]time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][]time.Time{}
	for n, at := range d.at {
		out[n] = append([]time.Time(nil), at...)
	}
	return out
}

func (d *dials) of(to string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.per[to]
}

func (d *dials) total() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, v := range d.per {
		n += v
	}
	return n
}

// rig is a running call queue over a real store, one organization with
// an agent, and a dispatcher on a test clock whose passes the test runs.
type rig struct {
	t     *testing.T
	ctx   context.Context
	st    store.Store
	org   model.Organization
	agent model.Agent
	queue *callqueue.Queue
	d     *Dispatcher
	clock *clock
	hooks *hooks
	dials *dials
	// zones are the recipients' own time zones, by number, for campaign.
	zones map[string]string
}

// outcomeOf is how the far end of a number answers: by its last digit,
// 0–5 answer (and hang up at once), 6–7 busy, 8 no answer, 9 rings
// until canceled.
func outcomeOf(req call.DialRequest) calltest.Script {
	switch req.ToNumber[len(req.ToNumber)-1] {
	case '6', '7':
		return calltest.Script{Fail: &call.DialError{Cause: call.CauseBusy, Message: "486 Busy Here"}}
	case '8':
		return calltest.Script{Fail: &call.DialError{Cause: call.CauseNoAnswer, Message: "no answer"}}
	case '9':
		return calltest.Script{}
	default:
		return calltest.Script{Answer: true, HangupAfterAnswer: true}
	}
}

func eachEngine(t *testing.T, fn func(t *testing.T, st store.Store)) {
	for name, open := range enginetest.Engines(t, "campaign") {
		t.Run(name, func(t *testing.T) { fn(t, open(t)) })
	}
}

func newRig(t *testing.T, st store.Store, limit int) *rig {
	t.Helper()
	ctx := context.Background()
	now := model.Now()
	r := &rig{t: t, ctx: ctx, st: st, clock: &clock{now: now}, hooks: &hooks{sent: make(chan struct{}, 16)}, dials: &dials{per: map[string]int{}, at: map[string][]time.Time{}}}
	r.org = model.Organization{ID: model.NewID(), Name: "acme-" + model.NewID(), ConcurrencyLimit: limit, InboundReservePercent: 20, CreatedAt: now, UpdatedAt: now}
	r.agent = model.Agent{ID: model.NewID(), OrgID: r.org.ID, Name: "Agent", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config: model.AgentConfig{PromptTemplate: "Hello {{name}}", InterruptionThresholdMs: 500}, CreatedAt: now, UpdatedAt: now}
	r.must(st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &r.org); err != nil {
			return err
		}
		return tx.CreateAgent(ctx, &r.agent)
	}))
	log := slog.New(slog.NewTextHandler(testLog(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	dialer := &calltest.Dialer{Script: func(req call.DialRequest) calltest.Script {
		r.dials.add(req.ToNumber, r.clock.Now())
		return outcomeOf(req)
	}}
	r.queue = callqueue.New(callqueue.Options{
		Store: st, Dialer: dialer, Webhooks: noPosts{}, Secret: noSecret,
		Node: "node-a", LeaseTTL: 5 * time.Second, Poll: 20 * time.Millisecond, Drain: 50 * time.Millisecond, Logger: log,
	})
	qctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		r.queue.Run(qctx)
		close(done)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	<-r.queue.Recovered()
	r.d = r.dispatcher("node-a")
	return r
}

// dispatcher is a dispatcher of this rig's store and queue named node.
func (r *rig) dispatcher(node string) *Dispatcher {
	d := &Dispatcher{Store: r.st, Calls: r.queue, Webhooks: r.hooks, Secret: noSecret, Node: node, Now: r.clock.Now,
		Logger: slog.New(slog.NewTextHandler(testLog(), nil))}
	d.setup()
	r.t.Cleanup(d.sends.Wait)
	return d
}

type noPosts struct{}

func (noPosts) PostCall(context.Context, string, string, []byte) string { return model.WebhookSkipped }

func noSecret(context.Context, string) (string, error) { return "s3cret", nil }

func testLog() io.Writer {
	if os.Getenv("CAMPAIGN_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

func (r *rig) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// campaign stores a running campaign of numbers, shaped by edit.
func (r *rig) campaign(numbers []string, edit func(*model.Campaign)) model.Campaign {
	r.t.Helper()
	c := New(r.org.ID, r.clock.Now())
	c.Name, c.AgentID = "List", r.agent.ID
	c.Config.FromNumbers = []string{"+14155550100"}
	c.Config.CallsPerMinute = 6000
	if edit != nil {
		edit(&c)
	}
	rs := make([]model.CampaignRecipient, len(numbers))
	for i, n := range numbers {
		rs[i] = model.CampaignRecipient{ID: model.NewID(), OrgID: r.org.ID, CampaignID: c.ID, ToNumber: n,
			Variables: map[string]any{"name": "n" + n}, Status: model.RecipientPending, CreatedAt: c.CreatedAt, UpdatedAt: c.CreatedAt}
		if tz, ok := r.zones[n]; ok {
			rs[i].Timezone = &tz
		}
	}
	r.must(r.st.Update(r.ctx, func(tx store.Tx) error {
		if err := tx.CreateCampaign(r.ctx, &c); err != nil {
			return err
		}
		if _, _, err := tx.AddCampaignRecipients(r.ctx, r.org.ID, c.ID, rs); err != nil {
			return err
		}
		cur, err := tx.GetCampaignForUpdate(r.ctx, r.org.ID, c.ID)
		if err != nil {
			return err
		}
		if cur.Status == model.CampaignDraft {
			cur.Status = model.CampaignRunning
		}
		return tx.UpdateCampaign(r.ctx, &cur)
	}))
	return r.get(c.ID)
}

func (r *rig) get(id string) model.Campaign {
	r.t.Helper()
	c, err := store.Read(r.ctx, r.st, func(tx store.Tx) (model.Campaign, error) { return tx.GetCampaign(r.ctx, r.org.ID, id) })
	r.must(err)
	return c
}

func (r *rig) recipients(id string) []model.CampaignRecipient {
	r.t.Helper()
	var all []model.CampaignRecipient
	for page := 1; ; page++ {
		rs, total, err := store.ReadPage(r.ctx, r.st, func(tx store.Tx) ([]model.CampaignRecipient, int, error) {
			return tx.ListCampaignRecipients(r.ctx, r.org.ID, id, store.RecipientFilter{Page: store.Page{Number: page, Size: 100, SortDir: store.Asc}})
		})
		r.must(err)
		all = append(all, rs...)
		if len(all) >= total || len(rs) == 0 {
			return all
		}
	}
}

// settled waits until no call of the organization holds a line but those
// ringing forever (numbers ending in 9).
func (r *rig) settled(ringing int) {
	r.t.Helper()
	r.eventually("calls ended", func() bool {
		n, err := store.Read(r.ctx, r.st, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(r.ctx, r.org.ID) })
		r.must(err)
		return n == ringing
	})
}

func (r *rig) eventually(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// live counts the organization's calls holding a line.
func (r *rig) live() int {
	n, err := store.Read(r.ctx, r.st, func(tx store.Tx) (int, error) { return tx.CountLiveCalls(r.ctx, r.org.ID) })
	r.must(err)
	return n
}

// campaignCalls lists the campaign's calls.
func (r *rig) campaignCalls(id string) []model.Call {
	calls, _, err := store.ReadPage(r.ctx, r.st, func(tx store.Tx) ([]model.Call, int, error) {
		return tx.ListCalls(r.ctx, r.org.ID, store.CallFilter{Page: store.Page{Number: 1, Size: 100}, CampaignID: id, Minimal: true})
	})
	r.must(err)
	return calls
}

func decode(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// campaignCallsAll counts every call of the campaign, page by page.
func (r *rig) campaignCallsAll(id string) []model.Call {
	r.t.Helper()
	var all []model.Call
	for page := 1; ; page++ {
		calls, total, err := store.ReadPage(r.ctx, r.st, func(tx store.Tx) ([]model.Call, int, error) {
			return tx.ListCalls(r.ctx, r.org.ID, store.CallFilter{Page: store.Page{Number: page, Size: 100}, CampaignID: id, Minimal: true})
		})
		r.must(err)
		all = append(all, calls...)
		if len(all) >= total || len(calls) == 0 {
			return all
		}
	}
}
