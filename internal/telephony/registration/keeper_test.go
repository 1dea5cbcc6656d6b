package registration

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// registrar is a fake registrar the keepers' bindings talk to: it records
// what each binding sent and fails the next registers when told.
type registrar struct {
	mu          sync.Mutex
	binds       map[string][]sipua.RegistrationConfig // node -> bindings made
	registers   map[string]int                        // node -> REGISTERs
	unregisters map[string]int                        // node -> un-REGISTERs
	fail        int                                   // the next fail REGISTERs answer 503
	granted     time.Duration
}

func newRegistrar() *registrar {
	return &registrar{binds: map[string][]sipua.RegistrationConfig{}, registers: map[string]int{}, unregisters: map[string]int{}, granted: time.Hour}
}

func (r *registrar) bind(node string) func(sipua.RegistrationConfig) (Binding, error) {
	return func(c sipua.RegistrationConfig) (Binding, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.binds[node] = append(r.binds[node], c)
		return binding{r, node}, nil
	}
}

type binding struct {
	r    *registrar
	node string
}

func (b binding) Register(ctx context.Context) (time.Duration, error) {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	b.r.registers[b.node]++
	if b.r.fail > 0 {
		b.r.fail--
		return 0, &sipua.Rejected{Code: 503, Reason: "Service Unavailable"}
	}
	return b.r.granted, nil
}

func (b binding) Unregister(ctx context.Context) error {
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	b.r.unregisters[b.node]++
	return nil
}

func (r *registrar) count(m map[string]int, node string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m[node]
}

type bundle struct {
	t     *testing.T
	ctx   context.Context
	st    store.Store
	box   *secret.Box
	reg   *registrar
	trunk model.SIPTrunk
}

func setup(t *testing.T) *bundle {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	key := make([]byte, secret.KeySize)
	_, _ = rand.Read(key)
	box, _ := secret.NewBox(key)
	b := &bundle{t: t, ctx: ctx, st: st, box: box, reg: newRegistrar()}
	org := model.Organization{Name: "acme", ConcurrencyLimit: 1, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	host, port, user := "sip.provider.example", 5080, "acct"
	b.trunk = model.SIPTrunk{OrgID: "", FriendlyName: "provider", Transport: model.TransportTCP, Host: &host, Port: &port,
		Username: &user, Password: box.Seal("trunk-pw"), InboundAllowedCIDRs: []string{}, CreatedAt: model.Now(), UpdatedAt: model.Now(),
		Registration: &model.TrunkRegistration{ExpiresSeconds: 600, ContactUser: "acct", Enabled: true}}
	b.update(func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		b.trunk.OrgID = org.ID
		return tx.CreateSIPTrunk(ctx, &b.trunk)
	})
	return b
}

func (b *bundle) update(fn func(store.Tx) error) {
	b.t.Helper()
	if err := b.st.Update(b.ctx, fn); err != nil {
		b.t.Fatal(err)
	}
}

// run runs a keeper for node until the test ends or the returned stop.
func (b *bundle) run(node string, claimAll bool, mods ...func(*Options)) (*Keeper, func()) {
	o := Options{Store: b.st, Box: b.box, Bind: b.reg.bind(node), Node: node, ClaimAll: claimAll,
		LeaseTTL: 300 * time.Millisecond, Sync: 20 * time.Millisecond, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, m := range mods {
		m(&o)
	}
	k := New(o)
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { k.Run(ctx); close(done) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	b.t.Cleanup(stop)
	return k, stop
}

func (b *bundle) status() model.RegistrationStatus {
	b.t.Helper()
	s, err := store.Read(b.ctx, b.st, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(b.ctx, b.trunk.OrgID, b.trunk.ID) })
	if err != nil {
		b.t.Fatal(err)
	}
	return s.RegistrationStatus
}

func (b *bundle) waitFor(what string, cond func(model.RegistrationStatus) bool) model.RegistrationStatus {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := b.status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waited for %s; the registration is %+v", what, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func registeredBy(node string) func(model.RegistrationStatus) bool {
	return func(st model.RegistrationStatus) bool {
		return st.State == model.RegistrationRegistered && st.Owner != nil && *st.Owner == node
	}
}

func TestBackoffDoublesToItsCap(t *testing.T) {
	k := New(Options{MinBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond})
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, k.backoff(n))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoffs = %v, want %v", got, want)
		}
	}
}

func TestSettingsFallBackToTheTrunk(t *testing.T) {
	b := setup(t)
	k, _ := b.run("a", true)
	b.waitFor("registered", registeredBy("a"))
	b.reg.mu.Lock()
	got := b.reg.binds["a"][0]
	b.reg.mu.Unlock()
	want := sipua.RegistrationConfig{Registrar: "sip.provider.example:5080", Transport: "tcp", User: "acct", Password: "trunk-pw",
		ContactUser: "acct", Expires: 600 * time.Second}
	if got != want {
		t.Fatalf("bound %+v, want %+v", got, want)
	}
	if s := k.States(); s[model.RegistrationRegistered] != 1 {
		t.Fatalf("states = %v", s)
	}
}

func TestFailuresBackOffThenRecover(t *testing.T) {
	b := setup(t)
	b.reg.fail = 3
	b.run("a", true)
	failed := b.waitFor("failed", func(st model.RegistrationStatus) bool { return st.State == model.RegistrationFailed })
	if failed.LastError == nil || *failed.LastError != "SIP 503 Service Unavailable" {
		t.Fatalf("lastError = %v", failed.LastError)
	}
	st := b.waitFor("registered", registeredBy("a"))
	if st.LastError != nil || st.ExpiresAt == nil || time.Until(*st.ExpiresAt) < 50*time.Minute {
		t.Fatalf("after recovery: %+v", st)
	}
	if n := b.reg.count(b.reg.registers, "a"); n < 4 {
		t.Fatalf("%d REGISTERs, want the 3 failed and a good one", n)
	}
}

func TestChangesAndDeletion(t *testing.T) {
	b := setup(t)
	k, _ := b.run("a", true)
	b.waitFor("registered", registeredBy("a"))

	// A changed setting unregisters the old binding and registers the new.
	b.trunk.Registration.ExpiresSeconds = 120
	b.update(func(tx store.Tx) error { return tx.UpdateSIPTrunk(b.ctx, &b.trunk) })
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.reg.mu.Lock()
		binds := b.reg.binds["a"]
		b.reg.mu.Unlock()
		if len(binds) == 2 && binds[1].Expires == 120*time.Second && b.reg.count(b.reg.unregisters, "a") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a change: binds %v, %d un-REGISTERs", binds, b.reg.count(b.reg.unregisters, "a"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.waitFor("registered again", registeredBy("a"))

	// Deleting the trunk unregisters it and lets it go.
	b.update(func(tx store.Tx) error { return tx.DeleteSIPTrunk(b.ctx, b.trunk.OrgID, b.trunk.ID) })
	for b.reg.count(b.reg.unregisters, "a") != 2 || len(k.States()) != 0 {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatalf("after deletion: %d un-REGISTERs, states %v", b.reg.count(b.reg.unregisters, "a"), k.States())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOneServerPerRegistration runs two servers on one database: only one
// registers; when it shuts down (unregistering) the other takes over, and
// when a holder dies without a word the other waits out its lease.
func TestOneServerPerRegistration(t *testing.T) {
	b := setup(t)
	_, stopA := b.run("a", false)
	b.waitFor("registered by a", registeredBy("a"))
	kb, _ := b.run("b", false)
	// b syncs many times over a's lease (renewed every 20 ms) without it.
	for i := 0; i < 10; i++ {
		kb.sync(b.ctx)
	}
	if n := b.reg.count(b.reg.registers, "b"); n != 0 {
		t.Fatalf("b sent %d REGISTERs while a held the registration", n)
	}
	stopA()
	if n := b.reg.count(b.reg.unregisters, "a"); n != 1 {
		t.Fatalf("a sent %d un-REGISTERs at shutdown, want 1", n)
	}
	b.waitFor("registered by b", registeredBy("b"))

	// A server that died holding it (lease until soon): b waits it out.
	var soon time.Time
	b.update(func(tx store.Tx) error {
		if err := tx.ReleaseSIPRegistration(b.ctx, b.trunk.OrgID, b.trunk.ID, "b", model.RegistrationUnregistered); err != nil {
			return err
		}
		now := model.Now()
		soon = now.Add(200 * time.Millisecond)
		_, err := tx.ClaimSIPRegistration(b.ctx, b.trunk.OrgID, b.trunk.ID, "dead", now, soon, true)
		return err
	})
	kb.sync(b.ctx) // b notices it lost the registration
	st := b.waitFor("registered by b again", registeredBy("b"))
	if !time.Now().After(soon) || st.LeaseUntil == nil {
		t.Fatalf("b took the registration over before the dead server's lease ended (%v)", soon)
	}
}

// TestRestartRegistersAgain: a server that comes back (same node name)
// finds its registration persisted, still held by it, and registers again
// without waiting for its old lease.
func TestRestartRegistersAgain(t *testing.T) {
	b := setup(t)
	exp := model.Now().Add(time.Hour)
	b.update(func(tx store.Tx) error {
		now := model.Now()
		if _, err := tx.ClaimSIPRegistration(b.ctx, b.trunk.OrgID, b.trunk.ID, "a", now, now.Add(time.Hour), false); err != nil {
			return err
		}
		return tx.SetSIPRegistrationStatus(b.ctx, b.trunk.OrgID, b.trunk.ID, "a", model.RegistrationStatus{State: model.RegistrationRegistered, ExpiresAt: &exp})
	})
	b.run("a", false)
	b.waitFor("registered again", func(st model.RegistrationStatus) bool {
		return registeredBy("a")(st) && st.ExpiresAt != nil && !st.ExpiresAt.Equal(exp)
	})
	if n := b.reg.count(b.reg.registers, "a"); n == 0 {
		t.Fatal("no REGISTER after the restart")
	}
}
