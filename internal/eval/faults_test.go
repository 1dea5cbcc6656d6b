package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/enginetest"
	"github.com/parley-voice/parley/internal/store/storefault"
	"github.com/parley-voice/parley/internal/webhook"
)

// engines opens a fresh store per test on each engine (enginetest).
func engines(t *testing.T) map[string]func(testing.TB) store.Store {
	return enginetest.Engines(t, "eval")
}

// cannedChats holds every text conversation the same way.
type cannedChats struct{}

func (cannedChats) Chat(context.Context, pipeline.Chat) (pipeline.ChatResult, error) {
	return pipeline.ChatResult{Transcript: []map[string]any{
		{"role": "assistant", "type": "message", "text": "Bella Vista, how can I help?", "turnId": "t0", "at": 0.1, "seq": 0},
		{"role": "user", "type": "message", "text": "A table for two, please.", "turnId": "t1", "at": 1.0, "seq": 1},
	}}, nil
}

// hooks counts test_run.completed deliveries by run.
type hooks struct {
	mu   sync.Mutex
	sent map[string]int
}

func (h *hooks) Deliver(_ context.Context, d webhook.Delivery) webhook.Result {
	var ev struct {
		TestRun struct {
			ID string `json:"id"`
		} `json:"testRun"`
	}
	_ = json.Unmarshal(d.Body, &ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent[ev.TestRun.ID]++
	return webhook.Result{ID: "d", Sent: true, StatusCode: 200}
}

func (h *hooks) count(runID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent[runID]
}

type runBundle struct {
	fs         *storefault.Store
	svc        *Service
	hooks      *hooks
	org, suite string
}

// newRunBundle is an organization with an agent (whose post-call webhook
// receives test_run.completed), a suite of two cases, and a runner for
// text-mode runs over fs, whose leases last lease; running, it drives them
// until the test ends.
func newRunBundle(t *testing.T, fs *storefault.Store, lease time.Duration, running bool) *runBundle {
	t.Helper()
	ctx := t.Context()
	now := model.Now()
	hook := "https://hooks.example.com/runs"
	o := model.Organization{ID: model.NewID(), Name: "acme", ConcurrencyLimit: 10, CreatedAt: now, UpdatedAt: now}
	a := model.Agent{ID: model.NewID(), OrgID: o.ID, Name: "Front desk", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config: model.AgentConfig{PostCallWebhookURL: &hook}, CreatedAt: now, UpdatedAt: now}
	if err := fs.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &o); err != nil {
			return err
		}
		return tx.CreateAgent(ctx, &a)
	}); err != nil {
		t.Fatal(err)
	}
	judge := newFakeModelScript(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: []string{`{"passed":true,"reasoning":"It took the booking."}`}}
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := &runBundle{fs: fs, hooks: &hooks{sent: map[string]int{}}, org: o.ID}
	r := &Runner{Store: fs, Chats: cannedChats{}, Judge: Judge{LLM: judge.client}, Webhooks: b.hooks,
		Secret: func(context.Context, string) (string, error) { return "whsec", nil },
		Node:   "node-a", LeaseTTL: lease, Poll: 5 * time.Millisecond,
		Writes: &persist.Writer{Store: fs, Logger: quiet}, Logger: quiet}
	b.svc = &Service{Store: fs, Runner: r}
	suite, err := b.svc.CreateSuite(ctx, o.ID, SuiteInput{Name: opt.Value("Bookings"), AgentID: opt.Value(a.ID)})
	if err != nil {
		t.Fatal(err)
	}
	b.suite = suite.ID
	in := CaseInput{Name: opt.Value("table"), Script: opt.Value("You book a table."), ScoringRubric: opt.Value("It books.")}
	if _, err := b.svc.CreateCases(ctx, o.ID, suite.ID, []CaseInput{in, in}); err != nil {
		t.Fatal(err)
	}
	if !running {
		return b
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(runCtx)
	}()
	t.Cleanup(func() { stop(); <-done })
	return b
}

func (b *runBundle) run(t *testing.T, id string) model.TestRun {
	t.Helper()
	ctx := t.Context()
	run, err := store.Read(ctx, b.fs, func(tx store.Tx) (model.TestRun, error) { return tx.GetTestRun(ctx, b.org, b.suite, id, true) })
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRunWritesSurviveFaults: a write of a run's life that the database
// refuses a few times (busy, an I/O error, a full disk) or whose answer
// is lost after it committed lands once the database takes it: every
// attempt passes, the run completes, and test_run.completed is sent once
// with its status recorded. The runner's lease outlasts the test, so
// nothing but the write's own retries can mend it. On both engines.
func TestRunWritesSurviveFaults(t *testing.T) {
	steps := []struct{ name, op, to string }{
		{"attempt start", "UpdateTestAttempt", model.AttemptRunning},
		{"attempt end", "UpdateTestAttempt", model.AttemptPassed},
		{"run end", "UpdateTestRun", model.TestRunCompleted},
		{"webhook status", "SetTestRunWebhookStatus", ""},
	}
	var rules []storefault.Rule
	for _, s := range steps {
		for _, err := range []error{storefault.Busy, storefault.IOError, storefault.DiskFull} {
			rules = append(rules, storefault.Rule{Op: s.op, To: s.to, Times: 2, Err: err})
		}
		rules = append(rules, storefault.Rule{Op: s.op, To: s.to, Times: 1, Err: storefault.Refused, LoseAck: true})
	}
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := storefault.Wrap(open(t))
			b := newRunBundle(t, fs, time.Hour, true)
			for _, r := range rules {
				desc := fmt.Sprintf("%s %s: %v (lost answer %v)", r.Op, r.To, r.Err, r.LoseAck)
				before := fs.Fails(r.Op)
				fs.Inject(r)
				started, err := b.svc.StartRun(t.Context(), b.org, b.suite, RunInput{Mode: opt.Value(model.TestModeText)})
				if err != nil {
					t.Fatalf("%s: %v", desc, err)
				}
				var run model.TestRun
				waitFor(t, desc+": the run's end and its webhook's status", func() bool {
					run = b.run(t, started.ID)
					return run.Status != model.TestRunRunning && run.WebhookStatus != nil
				})
				if run.Status != model.TestRunCompleted || run.PassedTests != 2 || *run.WebhookStatus != model.WebhookSent {
					t.Errorf("%s: run %s, %d passed, webhook %s", desc, run.Status, run.PassedTests, *run.WebhookStatus)
				}
				for _, a := range run.Attempts {
					if a.Status != model.AttemptPassed {
						msg := ""
						if a.ErrorMessage != nil {
							msg = *a.ErrorMessage
						}
						t.Errorf("%s: attempt %d %s: %s", desc, a.AttemptNumber, a.Status, msg)
					}
				}
				if n := fs.Fails(r.Op) - before; n != r.Times {
					t.Errorf("%s: the fault struck %d times, want %d", desc, n, r.Times)
				}
				if n := b.hooks.count(run.ID); n != 1 {
					t.Errorf("%s: test_run.completed sent %d times", desc, n)
				}
				fs.Clear()
			}
		})
	}
}

// TestRenewOnlyDrivenRuns: the runner renews the lease of the runs it
// drives and of no other; a run it holds but no longer drives (its end
// was not written in time) is left to lapse, and take picks it up again.
func TestRenewOnlyDrivenRuns(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			fs := storefault.Wrap(open(t))
			// The runner does not run: the test decides what it drives.
			b := newRunBundle(t, fs, time.Hour, false)
			r := b.svc.Runner
			var runs []model.TestRun
			for range 2 {
				run, err := b.svc.StartRun(ctx, b.org, b.suite, RunInput{Mode: opt.Value(model.TestModeText), Name: opt.Value("held")})
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, run)
			}
			// Both held by node-a until a minute ago.
			past := model.Now().Add(-time.Minute)
			for _, run := range runs {
				if err := fs.Update(ctx, func(tx store.Tx) error {
					cur, err := tx.GetTestRunForUpdate(ctx, b.org, run.ID)
					if err != nil {
						return err
					}
					cur.LeaseExpiresAt = &past
					return tx.UpdateTestRun(ctx, &cur)
				}); err != nil {
					t.Fatal(err)
				}
			}
			driven, held := runs[0], runs[1]
			r.mu.Lock()
			r.driving[driven.ID] = true
			r.mu.Unlock()
			r.renew(ctx)
			if l := b.run(t, driven.ID).LeaseExpiresAt; l == nil || !l.After(time.Now()) {
				t.Errorf("the driven run's lease was not renewed: %v", l)
			}
			if l := b.run(t, held.ID).LeaseExpiresAt; l == nil || l.After(time.Now()) {
				t.Errorf("the run held but not driven was renewed: %v", l)
			}
			taken := r.take(ctx, time.Now())
			if !slices.ContainsFunc(taken, func(x model.TestRun) bool { return x.ID == held.ID }) ||
				slices.ContainsFunc(taken, func(x model.TestRun) bool { return x.ID == driven.ID }) {
				t.Errorf("take took %v: want the held run and not the driven one", taken)
			}
		})
	}
}
