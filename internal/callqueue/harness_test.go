package callqueue

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/call/calltest"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/enginetest"
	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Main(m)) } // pgtest drops the schemas it kept

// engines opens a fresh store per engine (enginetest).
func engines(t testing.TB) map[string]func(t testing.TB) store.Store {
	return enginetest.Engines(t, "callqueue")
}

// posts records post-call deliveries.
type posts struct {
	mu     sync.Mutex
	bodies map[string][]byte // by call id
	sent   map[string]int    // deliveries by call id
	status string
	got    chan string
}

func newPosts() *posts {
	return &posts{bodies: map[string][]byte{}, sent: map[string]int{}, status: model.WebhookSent, got: make(chan string, 1024)}
}

func (p *posts) PostCall(_ context.Context, url, secret string, body []byte) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var id struct{ ID string }
	_ = json.Unmarshal(body, &id)
	p.bodies[id.ID] = body
	p.sent[id.ID]++
	select {
	case p.got <- id.ID:
	default: // nobody reads them (a benchmark's thousands of calls): sent counts them
	}
	return p.status
}

// deliveries says how many times call id's webhook was sent.
func (p *posts) deliveries(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[id]
}

// harness is a running queue over a real store with one organization and one agent.
type harness struct {
	t      testing.TB
	store  store.Store
	org    model.Organization
	agent  model.Agent
	dialer *calltest.Dialer
	posts  *posts
	queue  *Queue
	stop   func()
	// crashable is the queue's view of the store; crash cuts its writes.
	crashable *crashStore
}

// crashStore refuses every write once crashed: what a killed process
// leaves behind is the database as it was.
type crashStore struct {
	store.Store
	crashed atomic.Bool
}

// errCrashed is final: a dead process retries nothing.
var errCrashed = persist.Permanent(errors.New("the process is dead"))

func (c *crashStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if c.crashed.Load() {
		return errCrashed
	}
	return c.Store.Update(ctx, fn)
}

// crash kills the queue as SIGKILL would: nothing it does from now on
// reaches the database.
func (h *harness) crash() {
	h.crashable.crashed.Store(true)
	h.stop()
}

// insertLive stores an answered call leased by owner until now+lease.
func (h *harness) insertLive(owner string, lease time.Duration) model.Call {
	h.t.Helper()
	return h.insertLiveAs(owner, lease, model.CallInProgress)
}

// insertLiveAs stores a live call with status (RINGING or IN_PROGRESS)
// leased by owner until now+lease.
func (h *harness) insertLiveAs(owner string, lease time.Duration, status string) model.Call {
	h.t.Helper()
	now := model.Now()
	until := now.Add(lease)
	c := model.Call{
		ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Outbound,
		Status: status, FromNumber: "+14155550100", ToNumber: "+14155559999", Variables: map[string]any{},
		Prompt: "P", Transcript: []map[string]any{}, Metrics: map[string]any{}, InitiatedAt: &now,
		LeaseOwner: &owner, LeaseExpiresAt: &until, CreatedAt: now, UpdatedAt: now,
	}
	if status == model.CallInProgress {
		c.StartedAt = &now
	}
	if err := h.store.Update(context.Background(), func(tx store.Tx) error { return tx.CreateCall(context.Background(), &c) }); err != nil {
		h.t.Fatal(err)
	}
	return c
}

type harnessOption func(*Options)

func newHarness(t testing.TB, st store.Store, limit int, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, store: st, dialer: &calltest.Dialer{}, posts: newPosts()}
	h.org, h.agent = seedOrg(t, st, limit)
	h.start(opts...)
	return h
}

// seedOrg stores an organization with limit lines and an active agent
// with a post-call webhook.
func seedOrg(t testing.TB, st store.Store, limit int) (model.Organization, model.Agent) {
	t.Helper()
	ctx := context.Background()
	now := model.Now()
	org := model.Organization{ID: model.NewID(), Name: "acme-" + model.NewID(), ConcurrencyLimit: limit, CreatedAt: now, UpdatedAt: now}
	url := "https://hooks.example.com/post"
	agent := model.Agent{ID: model.NewID(), OrgID: org.ID, Name: "Agent", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config: model.AgentConfig{PromptTemplate: "P", InterruptionThresholdMs: 500, PostCallWebhookURL: &url}, CreatedAt: now, UpdatedAt: now}
	err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		return tx.CreateAgent(ctx, &agent)
	})
	if err != nil {
		t.Fatal(err)
	}
	return org, agent
}

func (h *harness) start(opts ...harnessOption) {
	h.crashable = &crashStore{Store: h.store}
	o := Options{
		Store: h.crashable, Dialer: h.dialer, Webhooks: h.posts,
		Secret: func(context.Context, string) (string, error) { return "", nil },
		Node:   "node-a", LeaseTTL: 3 * time.Second, Poll: 20 * time.Millisecond, Drain: time.Second,
		Logger: slog.New(slog.NewTextHandler(testLog(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, fn := range opts {
		fn(&o)
	}
	h.queue = New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		h.queue.Run(ctx)
		close(done)
	}()
	<-h.queue.recovered
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	h.t.Cleanup(h.stop)
}

// place places an outbound call to number.
func (h *harness) place(number string, skipQueue bool) (model.Call, error) {
	h.t.Helper()
	c := model.Call{
		ID: model.NewID(), OrgID: h.org.ID, AgentID: h.agent.ID, AgentName: h.agent.Name, Direction: model.Outbound,
		FromNumber: "+14155550100", ToNumber: number, Variables: map[string]any{}, Prompt: "P",
		Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	err := h.queue.Place(context.Background(), &c, skipQueue)
	return c, err
}

func (h *harness) mustPlace(number string) model.Call {
	h.t.Helper()
	c, err := h.place(number, false)
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *harness) get(id string) model.Call {
	h.t.Helper()
	c, err := store.Read(context.Background(), h.store, func(tx store.Tx) (model.Call, error) { return tx.GetCall(context.Background(), h.org.ID, id) })
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// waitStatus waits until call id has status.
func (h *harness) waitStatus(id, status string) model.Call {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c := h.get(id)
		if c.Status == status {
			return c
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("call %s is %s, want %s", id, c.Status, status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dialed waits for the next call the dialer receives.
func (h *harness) dialed() *calltest.Call {
	h.t.Helper()
	select {
	case c := <-h.dialer.Dialed():
		return c
	case <-time.After(15 * time.Second):
		h.t.Fatal("no call was dialed")
		return nil
	}
}

// waitPost waits for the post-call delivery of id and for its status to be recorded.
func (h *harness) waitPost(id string) model.Call {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c := h.get(id)
		if c.PostCallWebhookStatus != nil {
			return c
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("post-call webhook of %s never recorded", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) countStatus(status string) int {
	h.t.Helper()
	_, n, err := store.ReadPage(context.Background(), h.store, func(tx store.Tx) ([]model.Call, int, error) {
		return tx.ListCalls(context.Background(), h.org.ID, store.CallFilter{Page: store.Page{Number: 1, Size: 1}, Statuses: []string{status}})
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

func busy() *call.DialError { return &call.DialError{Cause: call.CauseBusy, Message: "486 Busy Here"} }

// describeFinal lists the ended calls' status, cause and error message.
func (h *harness) describeFinal() []string {
	h.t.Helper()
	cs, _, err := store.ReadPage(context.Background(), h.store, func(tx store.Tx) ([]model.Call, int, error) {
		return tx.ListCalls(context.Background(), h.org.ID, store.CallFilter{Page: store.Page{Number: 1, Size: 100},
			Statuses: []string{model.CallCompleted, model.CallFailed, model.CallCanceled, model.CallTransferred}})
	})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		d := c.Status
		if c.HangupCause != nil {
			d += " " + *c.HangupCause
		}
		if c.ErrorMessage != nil {
			d += ": " + *c.ErrorMessage
		}
		out = append(out, d)
	}
	return out
}

func testLog() io.Writer {
	if os.Getenv("CALLQUEUE_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
