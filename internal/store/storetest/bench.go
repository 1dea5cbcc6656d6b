package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// CallLoader stores every call of batches, in bulk, faster than CreateCall
// one by one can. The calls are complete (ids and times set) and ready to be
// stored as they are. A loader may set the database up for the load first
// and finish it afterwards (drop and rebuild indexes, analyze).
type CallLoader func(ctx context.Context, batches iter.Seq[[]model.Call]) error

// CallColumns are the columns of the calls table, in the order CallValues
// gives a call's values: for loaders that bypass the store.
var CallColumns = []string{
	"id", "org_id", "agent_id", "agent_name", "agent_caller_id_name", "sip_trunk_id", "direction", "status",
	"from_number", "to_number", "dialed_agent_id", "variables", "prompt", "first_message", "recording_url",
	"hangup_cause", "error_message", "transcript", "summary", "metrics", "initiated_at", "started_at", "ended_at",
	"duration_seconds", "pre_call_webhook_status", "post_call_webhook_status", "post_call_webhook_url",
	"lease_owner", "lease_expires_at", "created_at", "updated_at",
}

// CallValues is c as a row of CallColumns, documents as JSON text and times
// (already UTC milliseconds) as toTime writes them.
func CallValues(c model.Call, toTime func(time.Time) any) ([]any, error) {
	docs := make([]string, 3)
	for i, v := range []any{c.Variables, c.Transcript, c.Metrics} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		docs[i] = string(b)
	}
	opt := func(t *time.Time) any {
		if t == nil {
			return nil
		}
		return toTime(*t)
	}
	return []any{
		c.ID, c.OrgID, c.AgentID, c.AgentName, c.AgentCallerIDName, c.SIPTrunkID, c.Direction, c.Status,
		c.FromNumber, c.ToNumber, c.DialedAgentID, docs[0], c.Prompt, c.FirstMessage, c.RecordingURL,
		c.HangupCause, c.ErrorMessage, docs[1], c.Summary, docs[2], opt(c.InitiatedAt), opt(c.StartedAt), opt(c.EndedAt),
		c.DurationSeconds, c.PreCallWebhookStatus, c.PostCallWebhookStatus, c.PostCallWebhookURL,
		c.LeaseOwner, opt(c.LeaseExpiresAt), toTime(c.CreatedAt), toTime(c.UpdatedAt),
	}, nil
}

// BenchCalls is how many calls BenchListCalls seeds: PARLEY_BENCH_CALLS,
// default one million.
func BenchCalls(b *testing.B) int {
	b.Helper()
	v := os.Getenv("PARLEY_BENCH_CALLS")
	if v == "" {
		return 1_000_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("PARLEY_BENCH_CALLS=%q: want a positive number", v)
	}
	return n
}

// benchBatch is how many calls a batch of the load holds.
const benchBatch = 10_000

// BenchListCalls seeds one organization of st with BenchCalls calls through
// load (nil: CreateCall in large transactions), plus a second organization
// with a few, then measures the call lists the API serves most, each page in
// its own read transaction. Besides ns/op it reports each page's p50 and p99
// latency in milliseconds. Run it with -benchtime=100x or so: a list of a
// million calls counts them all, so a second holds few iterations.
func BenchListCalls(b *testing.B, st store.Store, load CallLoader) {
	ctx := b.Context()
	n := BenchCalls(b)
	org := model.Organization{Name: "bench", ConcurrencyLimit: 100}
	other := model.Organization{Name: "other", ConcurrencyLimit: 100}
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		return tx.CreateOrg(ctx, &other)
	}); err != nil {
		b.Fatal(err)
	}
	if load == nil {
		load = func(ctx context.Context, batches iter.Seq[[]model.Call]) error {
			for batch := range batches {
				err := st.Update(ctx, func(tx store.Tx) error {
					for i := range batch {
						if err := tx.CreateCall(ctx, &batch[i]); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
	}
	// Twenty agents, half of them in a folder.
	var agents []string
	sales := model.Folder{OrgID: org.ID, Name: "Sales"}
	if err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateFolder(ctx, &sales); err != nil {
			return err
		}
		for i := range 20 {
			a := model.Agent{
				OrgID: org.ID, Name: fmt.Sprintf("Agent %d", i), Status: model.AgentActive, Mode: model.ModeSinglePrompt,
				Config: model.AgentConfig{PromptTemplate: "Be brief.", InterruptionThresholdMs: model.DefaultInterruptionThresholdMs},
			}
			if i%2 == 0 {
				a.FolderID = &sales.ID
			}
			if err := tx.CreateAgent(ctx, &a); err != nil {
				return err
			}
			agents = append(agents, a.ID)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	g, og := newCallGen(org.ID, agents), newCallGen(other.ID, agents)
	batches := func(yield func([]model.Call) bool) {
		for done := 0; done < n; {
			batch := make([]model.Call, min(benchBatch, n-done))
			for i := range batch {
				batch[i] = g.next()
			}
			if !yield(batch) {
				return
			}
			done += len(batch)
		}
		small := make([]model.Call, 1000)
		for i := range small {
			small[i] = og.next()
		}
		yield(small)
	}
	start := time.Now()
	if err := load(ctx, batches); err != nil {
		b.Fatalf("seed calls: %v", err)
	}
	b.Logf("%s: seeded %d calls in %v", st.Engine(), n, time.Since(start).Round(time.Millisecond))

	first := func(f store.CallFilter) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			rows, total, err := tx.ListCalls(ctx, org.ID, f)
			if err == nil && (len(rows) == 0 || total == 0) {
				err = fmt.Errorf("list %+v: %d rows of %d", f, len(rows), total)
			}
			return err
		}
	}
	var total int
	if err := st.View(ctx, func(tx store.Tx) (err error) {
		_, total, err = tx.ListCalls(ctx, org.ID, store.CallFilter{Page: store.Page{Number: 1, Size: 1}})
		return err
	}); err != nil || total != n {
		b.Fatalf("the organization has %d calls (%v), want %d", total, err, n)
	}
	pageOf := func(number int) store.Page { return store.Page{Number: number, Size: 25} }
	deep := min(400, n/25) // page 400 at a million; the last full page of a smaller seed
	for _, c := range []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"DefaultPage", first(store.CallFilter{Page: pageOf(1)})},
		{"StatusPage", first(store.CallFilter{Page: pageOf(1), Statuses: []string{model.CallFailed}})},
		{"StatusesPage", first(store.CallFilter{Page: pageOf(1), Statuses: []string{model.CallFailed, model.CallCanceled}})},
		{"Page400", first(store.CallFilter{Page: pageOf(deep)})},
		{"AgentPage", first(store.CallFilter{Page: pageOf(1), AgentID: g.agents[0]})},
		{"FolderPage", first(store.CallFilter{Page: pageOf(1), FolderID: sales.ID})},
		{"TrunkPage", first(store.CallFilter{Page: pageOf(1), SIPTrunkID: g.trunks[0]})},
		{"ToNumberPage", first(store.CallFilter{Page: pageOf(1), ToNumber: g.firstTo})},
		{"EndedAtDescPage", first(store.CallFilter{Page: pageOf(1), SortBy: store.CallSortEndedAt})},
		{"EndedAtAscPage", first(store.CallFilter{Page: store.Page{Number: 1, Size: 25, SortDir: store.Asc}, SortBy: store.CallSortEndedAt})},
		// q: a common word (a third of the calls), a rare one (one call in
		// ten thousand), a number fragment, an agent's name (a twentieth),
		// and a query too short for a trigram.
		{"QueryCommonPage", first(store.CallFilter{Page: pageOf(1), Query: "refund"})},
		{"QueryRarePage", first(store.CallFilter{Page: pageOf(1), Query: "warranty"})},
		{"QueryNumberPage", first(store.CallFilter{Page: pageOf(1), Query: g.firstTo[len(g.firstTo)-5:]})},
		{"QueryAgentPage", first(store.CallFilter{Page: pageOf(1), Query: "agent 7"})},
		{"QueryRareStatusPage", first(store.CallFilter{Page: pageOf(1), Query: "warranty", Statuses: []string{model.CallCompleted}})},
		{"QueryShortPage", first(store.CallFilter{Page: pageOf(1), Query: "7"})},
		{"CountLiveCalls", func(tx store.Tx) error {
			n, err := tx.CountLiveCalls(ctx, org.ID)
			if err == nil && n != g.live {
				err = fmt.Errorf("%d live calls, want %d", n, g.live)
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, 1024)
			for b.Loop() {
				t0 := time.Now()
				if err := st.View(ctx, c.fn); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// callGen makes an organization's calls as a busy deployment would have
// them: one every few seconds over months, most completed, some failed or
// canceled, a handful queued or live, spread over a few agents and trunks.
type callGen struct {
	org     string
	rng     *rand.Rand
	i       int
	agents  []string
	trunks  []string
	live    int    // live calls made so far
	firstTo string // the number the first outbound call went to
}

func newCallGen(org string, agents []string) *callGen {
	g := &callGen{org: org, agents: agents, rng: rand.New(rand.NewPCG(1, 2))}
	for range 3 {
		g.trunks = append(g.trunks, model.NewID())
	}
	return g
}

func (g *callGen) next() model.Call {
	g.i++
	created := base.Add(time.Duration(g.i) * 7 * time.Second).Add(time.Duration(g.rng.IntN(1000)) * time.Millisecond)
	agent := g.rng.IntN(len(g.agents))
	c := model.Call{
		ID:         model.NewID(),
		OrgID:      g.org,
		AgentID:    g.agents[agent],
		AgentName:  fmt.Sprintf("Agent %d", agent),
		SIPTrunkID: &g.trunks[agent%len(g.trunks)],
		Direction:  model.Outbound,
		FromNumber: "+14155550100",
		ToNumber:   fmt.Sprintf("+1415%07d", g.rng.IntN(50_000)), // 50,000 customers
		Variables:  map[string]any{"customer_name": "Ada", "order_id": strconv.Itoa(g.i)},
		Prompt:     "You are a helpful assistant for ACME. Confirm the order with the customer and answer questions.",
		Transcript: []map[string]any{},
		Metrics:    map[string]any{},
		CreatedAt:  created,
	}
	if g.rng.IntN(3) == 0 {
		c.Direction, c.FromNumber, c.ToNumber = model.Inbound, c.ToNumber, "+14155550100"
	} else if g.firstTo == "" {
		g.firstTo = c.ToNumber
	}
	r := g.rng.IntN(1000)
	switch {
	case r < 900:
		c.Status = model.CallCompleted
	case r < 950:
		c.Status = model.CallFailed
	case r < 980:
		c.Status = model.CallCanceled
	default:
		c.Status = model.CallTransferred
	}
	if g.i%50_000 == 0 { // a few queued and live calls, among the newest
		c.Status = model.CallQueued
	} else if g.i%50_000 == 1 {
		c.Status = model.CallInProgress
		g.live++
	}
	initiated := created.Add(200 * time.Millisecond)
	c.InitiatedAt = &initiated
	switch c.Status {
	case model.CallCompleted, model.CallTransferred, model.CallInProgress:
		started := initiated.Add(time.Duration(2+g.rng.IntN(20)) * time.Second)
		c.StartedAt = &started
		if c.Status == model.CallInProgress {
			break
		}
		d := 10 + g.rng.IntN(600)
		ended := started.Add(time.Duration(d) * time.Second)
		c.EndedAt, c.DurationSeconds = &ended, &d
		c.HangupCause = ptr("USER_ENDED")
		c.RecordingURL = ptr("https://parley.example.com/v1/recordings/" + c.ID + ".wav")
		c.Summary = ptr([]string{"Confirmed the order.", "Customer asked for a refund.", "Rescheduled delivery."}[g.rng.IntN(3)])
		if g.i%10_000 == 7 {
			c.Summary = ptr("Customer asked about the warranty.")
		}
		c.Transcript = []map[string]any{
			{"at": 0.4, "seq": 1.0, "role": "assistant", "text": "Hi, this is ACME calling about your order.", "type": "message", "turnId": "t1", "isFinal": true},
			{"at": 3.1, "seq": 2.0, "role": "user", "text": "Yes, go ahead.", "type": "message", "turnId": "t2", "isFinal": true, "language": "en"},
		}
		c.Metrics = map[string]any{"llm_prompt_tokens": 812.0, "llm_completion_tokens": 96.0, "tts_characters_count": 310.0}
		c.PostCallWebhookURL = ptr("https://example.com/post-call")
		c.PostCallWebhookStatus = ptr(model.WebhookSent)
	case model.CallFailed, model.CallCanceled:
		ended := initiated.Add(time.Duration(1+g.rng.IntN(30)) * time.Second)
		c.EndedAt = &ended
		c.ErrorMessage = ptr("callee busy")
	case model.CallQueued:
		c.InitiatedAt = nil
	}
	if c.Status == model.CallInProgress {
		lease := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
		c.LeaseOwner, c.LeaseExpiresAt = ptr("node-a"), &lease
	}
	c.UpdatedAt = created
	if c.EndedAt != nil {
		c.UpdatedAt = *c.EndedAt
	}
	return c
}
