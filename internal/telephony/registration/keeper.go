package registration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// Binding sends one registration's REGISTERs (a *sipua.Registration).
type Binding interface {
	Register(ctx context.Context) (time.Duration, error)
	Unregister(ctx context.Context) error
}

// Options configure a Keeper.
type Options struct {
	Store store.Store
	Box   *secret.Box
	// Bind prepares a binding (sipua.UA.NewRegistration).
	Bind func(sipua.RegistrationConfig) (Binding, error)
	// Node names this server; it owns the leases of its registrations.
	Node string
	// LeaseTTL is how long a registration stays this server's without
	// renewal (default 30 s); another server takes it over after that.
	LeaseTTL time.Duration
	// ClaimAll takes every registration whoever held it: the database is
	// this server's alone (SQLite).
	ClaimAll bool
	// Sync is how often settings are re-read and leases renewed (default
	// a third of LeaseTTL).
	Sync time.Duration
	// MinBackoff and MaxBackoff bound the wait after a failed attempt: it
	// doubles from MinBackoff (default 1 s) up to MaxBackoff (default 5 min).
	MinBackoff, MaxBackoff time.Duration
	// RequestTimeout bounds one REGISTER, challenge included (default 10 s),
	// and the retries of a lease's release.
	RequestTimeout time.Duration
	// Writes retries a status or a release the database does not take
	// (default: a Writer over Store).
	Writes *persist.Writer
	Logger *slog.Logger
}

// Keeper keeps the registrations this server holds alive.
type Keeper struct {
	o Options

	syncMu sync.Mutex // one sync at a time: two could start one registration twice

	mu   sync.Mutex
	held map[string]*held // trunk id -> the registration being kept
}

// held is one registration this server keeps: its goroutine (keep) is
// owned by the Keeper, which starts it in sync and stops it in release.
type held struct {
	orgID, trunkID string
	settings       sipua.RegistrationConfig // as bound: a change re-registers
	binding        Binding
	cancel         context.CancelFunc
	done           chan struct{}
	state          string // guarded by Keeper.mu
}

// New builds a Keeper; Run runs it.
func New(o Options) *Keeper {
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 30 * time.Second
	}
	if o.Sync <= 0 {
		o.Sync = o.LeaseTTL / 3
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(5*time.Minute, o.MinBackoff)
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Writes == nil {
		o.Writes = &persist.Writer{Store: o.Store, Logger: o.Logger}
	}
	return &Keeper{o: o, held: map[string]*held{}}
}

// Run keeps registrations until ctx ends, then unregisters every one it
// holds (each bounded by RequestTimeout) and returns.
func (k *Keeper) Run(ctx context.Context) {
	t := time.NewTicker(k.o.Sync)
	defer t.Stop()
	for {
		k.sync(ctx)
		select {
		case <-ctx.Done():
			k.releaseAll()
			return
		case <-t.C:
		}
	}
}

// States counts the registrations this server holds by state.
func (k *Keeper) States() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for _, h := range k.held {
		out[h.state]++
	}
	return out
}

// sync brings the registrations held in line with the store: renews the
// leases of those still wanted, takes free ones, and lets go of those
// removed, disabled, changed or lost to another server.
func (k *Keeper) sync(ctx context.Context) {
	k.syncMu.Lock()
	defer k.syncMu.Unlock()
	trunks, err := store.Read(ctx, k.o.Store, func(tx store.Tx) ([]model.SIPTrunk, error) { return tx.RegisteringTrunks(ctx) })
	if err != nil {
		if ctx.Err() == nil {
			k.o.Logger.Error("registrations: list trunks", "err", err)
		}
		return
	}
	wanted := map[string]sipua.RegistrationConfig{}
	orgs := map[string]string{}
	for _, t := range trunks {
		if !t.Registration.Enabled || t.Transport == model.TransportLoopback {
			continue
		}
		cfg, err := k.settings(t)
		if err != nil {
			k.o.Logger.Error("registrations: trunk settings", "org_id", t.OrgID, "trunk_id", t.ID, "err", err)
			continue
		}
		wanted[t.ID], orgs[t.ID] = cfg, t.OrgID
	}
	k.mu.Lock()
	var gone []*held
	for id, h := range k.held {
		if cfg, ok := wanted[id]; !ok || cfg != h.settings {
			gone = append(gone, h)
			delete(k.held, id)
		}
	}
	k.mu.Unlock()
	released := map[string]bool{}
	for _, h := range gone {
		k.release(h, true)
		released[h.trunkID] = true
	}
	// A lease this server holds on a registration it does not keep (not
	// wanted any more) is one whose release the database did not take:
	// this is where it is let go.
	for _, t := range trunks {
		if _, ok := wanted[t.ID]; ok || released[t.ID] {
			continue
		}
		if o := t.RegistrationStatus.Owner; o != nil && *o == k.o.Node {
			k.releaseLease(&held{orgID: t.OrgID, trunkID: t.ID}, model.RegistrationUnregistered)
		}
	}
	now := model.Now()
	for id, cfg := range wanted {
		var mine bool
		err := k.o.Store.Update(ctx, func(tx store.Tx) (err error) {
			mine, err = tx.ClaimSIPRegistration(ctx, orgs[id], id, k.o.Node, now, now.Add(k.o.LeaseTTL), k.o.ClaimAll)
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				k.o.Logger.Error("registrations: claim", "org_id", orgs[id], "trunk_id", id, "err", err)
			}
			continue // keep what runs; the lease outlives one missed renewal
		}
		k.mu.Lock()
		h := k.held[id]
		if !mine && h != nil {
			delete(k.held, id)
		}
		k.mu.Unlock()
		switch {
		case !mine && h != nil:
			k.lost(ctx, h)
		case mine && h == nil:
			k.start(ctx, orgs[id], id, cfg)
		}
	}
}

// lost lets go of a registration whose claim failed: the trunk was
// deleted or its registration removed or disabled since the listing
// (unregister), or another server took it over once our lease lapsed (its
// binding is its own; ours expires by itself).
func (k *Keeper) lost(ctx context.Context, h *held) {
	t, err := store.Read(ctx, k.o.Store, func(tx store.Tx) (model.SIPTrunk, error) { return tx.GetSIPTrunk(ctx, h.orgID, h.trunkID) })
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && (t.Registration == nil || !t.Registration.Enabled)):
		k.release(h, true)
	default:
		k.o.Logger.Warn("registration taken over by another server", "org_id", h.orgID, "trunk_id", h.trunkID)
		k.release(h, false)
	}
}

// settings is the binding a trunk asks for, with its fallbacks to the
// trunk's own host, transport and credentials.
func (k *Keeper) settings(t model.SIPTrunk) (sipua.RegistrationConfig, error) {
	r := t.Registration
	cfg := sipua.RegistrationConfig{Transport: t.Transport, ContactUser: r.ContactUser,
		Expires: time.Duration(r.ExpiresSeconds) * time.Second}
	switch {
	case r.Registrar != nil:
		cfg.Registrar = *r.Registrar
	case t.Host != nil && t.Port != nil:
		cfg.Registrar = net.JoinHostPort(*t.Host, strconv.Itoa(*t.Port))
	case t.Host != nil:
		cfg.Registrar = *t.Host
	default:
		return cfg, errors.New("no registrar and no trunk host")
	}
	if r.Transport != nil {
		cfg.Transport = *r.Transport
	}
	if r.Username != nil {
		cfg.User = *r.Username
	} else if t.Username != nil {
		cfg.User = *t.Username
	}
	sealed := r.Password
	if len(sealed) == 0 {
		sealed = t.Password
	}
	if len(sealed) > 0 {
		pw, err := k.o.Box.Open(sealed)
		if err != nil {
			return cfg, fmt.Errorf("open the registration password: %w", err)
		}
		cfg.Password = pw
	}
	return cfg, nil
}

// start begins keeping a registration this server has just claimed.
func (k *Keeper) start(ctx context.Context, orgID, trunkID string, cfg sipua.RegistrationConfig) {
	h := &held{orgID: orgID, trunkID: trunkID, settings: cfg, done: make(chan struct{}), state: model.RegistrationRegistering}
	b, err := k.o.Bind(cfg)
	if err != nil {
		// Settings this server cannot use (TLS off here, say): say so on
		// the trunk and let the lease go, so a server that can takes it.
		// (A write the database does not take is tried again at the next
		// sync, which claims the registration again.)
		msg := err.Error()
		k.status(ctx, h, model.RegistrationStatus{State: model.RegistrationFailed, LastError: &msg}, 0)
		k.releaseLease(h, model.RegistrationFailed)
		return
	}
	h.binding = b
	var kctx context.Context
	kctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	k.mu.Lock()
	k.held[trunkID] = h
	k.mu.Unlock()
	go k.keep(kctx, h)
}

// keep registers, refreshes at half the granted expiry, and retries
// failures after a doubling backoff, until ctx ends.
func (k *Keeper) keep(ctx context.Context, h *held) {
	defer close(h.done)
	log := k.o.Logger.With("org_id", h.orgID, "trunk_id", h.trunkID, "registrar", h.settings.Registrar)
	k.status(ctx, h, model.RegistrationStatus{State: model.RegistrationRegistering}, k.o.RequestTimeout)
	failures := 0
	for {
		rctx, cancel := context.WithTimeout(ctx, k.o.RequestTimeout)
		granted, err := h.binding.Register(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil && granted <= 0 {
			err = errors.New("the registrar granted no expiry for our contact")
		}
		var wait time.Duration
		var st model.RegistrationStatus
		if err != nil {
			failures++
			wait = k.backoff(failures)
			msg := err.Error()
			if errors.Is(err, context.DeadlineExceeded) {
				msg = fmt.Sprintf("no answer from the registrar within %s", k.o.RequestTimeout)
			}
			log.Warn("registration failed", "err", msg, "retry_in", wait.String())
			st = model.RegistrationStatus{State: model.RegistrationFailed, LastError: &msg}
		} else {
			if failures > 0 || h.state != model.RegistrationRegistered {
				log.Info("registered", "expires", granted.String())
			}
			failures = 0
			wait = granted / 2
			exp := model.Now().Add(granted)
			st = model.RegistrationStatus{State: model.RegistrationRegistered, ExpiresAt: &exp}
		}
		due := time.Now().Add(wait)
		// The status is retried until the next REGISTER, which writes a
		// newer one (at least for RequestTimeout: a short backoff does not
		// cut a database's brief hiccup).
		k.status(ctx, h, st, max(wait, k.o.RequestTimeout))
		t := time.NewTimer(time.Until(due))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// backoff is the wait after the n-th failure in a row.
func (k *Keeper) backoff(n int) time.Duration {
	d := k.o.MinBackoff
	for i := 1; i < n && d < k.o.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, k.o.MaxBackoff)
}

// status records where h stands, in memory (metrics) and on the trunk. A
// write the database does not take is retried for up to retryFor (0: it
// is tried once), or until ctx ends: h is released then, and the release
// writes its own state.
func (k *Keeper) status(ctx context.Context, h *held, st model.RegistrationStatus, retryFor time.Duration) {
	k.mu.Lock()
	h.state = st.State
	k.mu.Unlock()
	write := func(ctx context.Context) error {
		return k.o.Store.Update(ctx, func(tx store.Tx) error {
			return tx.SetSIPRegistrationStatus(ctx, h.orgID, h.trunkID, k.o.Node, st)
		})
	}
	var err error
	if retryFor <= 0 {
		err = write(context.WithoutCancel(ctx))
	} else {
		wctx, cancel := context.WithTimeout(ctx, retryFor)
		err = k.o.Writes.Do(wctx, "registration status", write)
		cancel()
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil { // not found: deleted or taken over; sync lets go
		k.o.Logger.Error("registrations: status not written; the next one replaces it", "org_id", h.orgID, "trunk_id", h.trunkID,
			"state", st.State, "err", err)
	}
}

// release stops keeping h, unregisters our contact when unregister (and
// it was registered), and gives the lease up.
func (k *Keeper) release(h *held, unregister bool) {
	h.cancel()
	<-h.done
	k.mu.Lock()
	registered := h.state == model.RegistrationRegistered
	k.mu.Unlock()
	if unregister && registered {
		ctx, cancel := context.WithTimeout(context.Background(), k.o.RequestTimeout)
		if err := h.binding.Unregister(ctx); err != nil {
			k.o.Logger.Warn("unregister failed", "org_id", h.orgID, "trunk_id", h.trunkID, "err", err)
		}
		cancel()
	}
	k.releaseLease(h, model.RegistrationUnregistered)
}

// releaseLease gives h's lease up, leaving state on the trunk. A release
// the database does not take is retried for RequestTimeout; past it the
// lease stays, and the next sync lets it go (or, at shutdown, the next
// start's; meanwhile it lapses, and another server may take a registration
// still wanted).
func (k *Keeper) releaseLease(h *held, state string) {
	ctx, cancel := context.WithTimeout(context.Background(), k.o.RequestTimeout)
	defer cancel()
	err := k.o.Writes.Do(ctx, "registration release", func(ctx context.Context) error {
		return k.o.Store.Update(ctx, func(tx store.Tx) error {
			return tx.ReleaseSIPRegistration(ctx, h.orgID, h.trunkID, k.o.Node, state)
		})
	})
	if err != nil {
		k.o.Logger.Error("registrations: release not written; the next sync lets it go", "org_id", h.orgID, "trunk_id", h.trunkID, "err", err)
	}
}

// releaseAll unregisters everything held, in parallel (shutdown).
func (k *Keeper) releaseAll() {
	k.mu.Lock()
	all := make([]*held, 0, len(k.held))
	for id, h := range k.held {
		all = append(all, h)
		delete(k.held, id)
	}
	k.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.release(h, true)
		}()
	}
	wg.Wait()
}
