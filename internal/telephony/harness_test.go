package telephony

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/emiago/sipgo/sip"
	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/webhook"
)

func TestMain(m *testing.M) {
	// SIP timers scaled down from T1 = 500 ms: on loopback nothing is lost,
	// and transactions (which hold goroutines until Timer L/M, 64*T1) end
	// in 6.4 s instead of 32 s, so leak checks settle quickly.
	sip.SetTimers(100*time.Millisecond, 400*time.Millisecond, 500*time.Millisecond)
	goleak.VerifyTestMain(m)
}

// env is one Parley call plane with real SIP on 127.0.0.1: store, queue,
// phone, user agent, one organization.
type env struct {
	t     *testing.T
	ctx   context.Context
	st    store.Store
	q     *callqueue.Queue
	phone *Phone
	ua    *sipua.UA
	org   model.Organization
}

type envOption func(*Phone, *callqueueOptions)

type callqueueOptions = callqueue.Options

type storeTx = store.Tx

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	return newEnvMedia(t, 10*time.Second, opts...)
}

// newEnvMedia is newEnv whose legs end after mediaTimeout without RTP (the
// load test's calls sit silent while all 200 are set up, which takes long
// when CI loads the machine).
func newEnvMedia(t *testing.T, mediaTimeout time.Duration, opts ...envOption) *env {
	t.Helper()
	return newEnvUA(t, sipua.Config{MediaTimeout: mediaTimeout}, opts...)
}

// newEnvUA is newEnv with the user agent configured by cfg (its listen
// address and logger are the harness's).
func newEnvUA(t *testing.T, cfg sipua.Config, opts ...envOption) *env {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	key := make([]byte, secret.KeySize)
	_, _ = rand.Read(key)
	box, _ := secret.NewBox(key)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() && os.Getenv("PARLEY_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cfg.ListenAddr, cfg.Logger = "127.0.0.1:0", log
	ua, err := sipua.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hooks := webhook.New(webhook.Options{AllowPrivate: true})
	phone := &Phone{
		UA: ua, Store: st, Box: box, PreCalls: hooks,
		Secret:      func(context.Context, string) (string, error) { return "", nil },
		Recordings:  &recording.Store{Dir: t.TempDir(), PublicURL: "http://parley.test", Key: box.Derive("recording-links")},
		RingTimeout: 10 * time.Second, Logger: log,
	}
	qo := callqueue.Options{
		Store: st, Dialer: phone, Webhooks: hooks, Secret: phone.Secret, Node: "test",
		ReclaimAllOnStart: true, Poll: 50 * time.Millisecond, Logger: log,
	}
	for _, o := range opts {
		o(phone, &qo)
	}
	q := callqueue.New(qo)
	phone.Calls = q
	e := &env{t: t, ctx: ctx, st: st, q: q, phone: phone, ua: ua}
	e.org = model.Organization{Name: "acme", ConcurrencyLimit: 10, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	e.write(func(tx store.Tx) error { return tx.CreateOrg(ctx, &e.org) })

	runCtx, stop := context.WithCancel(ctx)
	queueDone := make(chan struct{})
	go func() { q.Run(runCtx); close(queueDone) }()
	if err := ua.Start(runCtx, phone.Handle); err != nil {
		t.Fatal(err)
	}
	<-q.Recovered() // its end-of-the-previous-run pass would end calls a test writes
	t.Cleanup(func() {
		stop()
		<-queueDone
		ua.Close()
		hooks.Close()
	})
	return e
}

func (e *env) write(fn func(tx store.Tx) error) {
	e.t.Helper()
	if err := e.st.Update(e.ctx, fn); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) agent(mods ...func(*model.Agent)) model.Agent {
	e.t.Helper()
	a := model.Agent{
		OrgID: e.org.ID, Name: "Front desk", Status: model.AgentActive, Mode: model.ModeSinglePrompt,
		Config:    model.AgentConfig{PromptTemplate: "Hello {{name}}", InterruptionThresholdMs: model.DefaultInterruptionThresholdMs},
		CreatedAt: model.Now(), UpdatedAt: model.Now(),
	}
	for _, m := range mods {
		m(&a)
	}
	e.write(func(tx store.Tx) error { return tx.CreateAgent(e.ctx, &a) })
	return a
}

// trunk creates a trunk to addr ("host:port"), or the loopback trunk when
// addr is "".
func (e *env) trunk(addr string, mods ...func(*model.SIPTrunk)) model.SIPTrunk {
	e.t.Helper()
	t := model.SIPTrunk{OrgID: e.org.ID, FriendlyName: "carrier", Transport: model.TransportUDP, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	if addr == "" {
		t.Transport = model.TransportLoopback
	} else {
		h, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		t.Host, t.Port = &h, &port
	}
	for _, m := range mods {
		m(&t)
	}
	e.write(func(tx store.Tx) error { return tx.CreateSIPTrunk(e.ctx, &t) })
	return t
}

func (e *env) number(e164 string, agentID, trunkID *string) model.PhoneNumber {
	e.t.Helper()
	n := model.PhoneNumber{OrgID: e.org.ID, E164: e164, AgentID: agentID, SIPTrunkID: trunkID, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	e.write(func(tx store.Tx) error { return tx.CreatePhoneNumber(e.ctx, &n) })
	return n
}

// place places an outbound call from agent a to to.
func (e *env) place(a model.Agent, to string) model.Call {
	e.t.Helper()
	c := model.Call{
		ID: model.NewID(), OrgID: e.org.ID, AgentID: a.ID, AgentName: a.Name, SIPTrunkID: a.SIPTrunkID,
		Direction: model.Outbound, FromNumber: "+15550001000", ToNumber: to,
		Variables: map[string]any{}, Transcript: []map[string]any{}, Metrics: map[string]any{},
	}
	if err := e.q.Place(e.ctx, &c, false); err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) get(id string) model.Call {
	e.t.Helper()
	c, err := store.Read(e.ctx, e.st, func(tx store.Tx) (model.Call, error) { return tx.GetCall(e.ctx, e.org.ID, id) })
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// waitFor polls the call until cond holds (10 s at most).
func (e *env) waitFor(id string, what string, cond func(model.Call) bool) model.Call {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c := e.get(id)
		if cond(c) {
			return c
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("call %s: waited for %s; it is %s (cause %v, error %v)", id, what, c.Status, deref(c.HangupCause), deref(c.ErrorMessage))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loopbackCaller makes an agent "Callee" owning +15551230000 and returns
// an agent that calls out through the loopback trunk: the two sides of a
// loopback call.
func (e *env) loopbackCaller() model.Agent {
	e.t.Helper()
	callee := e.agent(func(a *model.Agent) { a.Name = "Callee" })
	e.number("+15551230000", &callee.ID, nil)
	return e.agent(withTrunk(e.trunk("").ID))
}

// waitInbound waits for the end of the organization's one inbound call
// (the callee's side of a loopback call) and returns it.
func (e *env) waitInbound() model.Call {
	e.t.Helper()
	for _, c := range e.calls() {
		if c.Direction == model.Inbound {
			return e.waitFinal(c.ID)
		}
	}
	e.t.Fatal("no inbound call was recorded")
	return model.Call{}
}

// waitLegs waits until the user agent holds want dialog slots (a leg frees
// its slot a moment after its call record is final).
func (e *env) waitLegs(want int) {
	e.t.Helper()
	waitSlots(e.t, e.ua, want)
}

func waitSlots(t *testing.T, ua *sipua.UA, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for ua.Active() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d SIP dialog slots taken, want %d", ua.Active(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) waitFinal(id string) model.Call {
	e.t.Helper()
	return e.waitFor(id, "its end", func(c model.Call) bool { return call.IsFinal(c.Status) })
}

// calls lists the organization's calls, newest first.
func (e *env) calls() []model.Call {
	e.t.Helper()
	cs, _, err := store.ReadPage(e.ctx, e.st, func(tx store.Tx) ([]model.Call, int, error) {
		return tx.ListCalls(e.ctx, e.org.ID, store.CallFilter{Page: store.Page{Number: 1, Size: 100}})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return cs
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func wantEnd(t *testing.T, c model.Call, status, cause string) {
	t.Helper()
	if c.Status != status || deref(c.HangupCause) != cause {
		t.Fatalf("call ended %s/%s (%s), want %s/%s", c.Status, deref(c.HangupCause), deref(c.ErrorMessage), status, cause)
	}
}

// recordingOf reads a call's recording.
func (e *env) recordingOf(c model.Call) audio.WAV {
	e.t.Helper()
	f, err := e.phone.Recordings.Open(context.Background(), c.OrgID, c.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	w, err := audio.ReadWAV(f)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// convFunc is a Conversation from a function.
type convFunc func(ctx context.Context, l *Live)

func (f convFunc) Run(ctx context.Context, l *Live) call.Outcome {
	f.converse(ctx, l)
	return call.Outcome{}
}

func (f convFunc) converse(ctx context.Context, l *Live) { f(ctx, l) }
