package telephony

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/netip"
	"sync"
	"time"

	"github.com/parley-voice/parley/internal/media/sipua"
	"github.com/parley-voice/parley/internal/store"
)

// A refused inbound call is recorded (a missed call matters to the
// customer), but a caller that keeps calling while the organization is
// at its limit, or a flood of INVITEs from one address, must not become
// a record and a webhook per INVITE: within refusalWindow, one refusal
// per source address and dialed number is recorded, the rest are only
// answered.
const (
	refusalWindow = time.Minute
	// maxRefusals bounds the window's memory; when full, the oldest
	// entries go first (a flood from many addresses gets more records,
	// never more memory).
	maxRefusals = 1 << 14
)

type refusalKey struct {
	source netip.Addr
	number string
}

// refusals are the refusals recorded within the window. The zero value
// is ready.
type refusals struct {
	mu   sync.Mutex
	seen map[refusalKey]time.Time
}

// take reports whether a refusal of number from source should be
// recorded now, and if so notes it: true at most once per window. A call
// that was not refused after all gives its turn back with release.
func (r *refusals) take(source netip.Addr, number string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := refusalKey{source, number}
	if at, ok := r.seen[k]; ok && now.Sub(at) < refusalWindow {
		return false
	}
	if r.seen == nil {
		r.seen = map[refusalKey]time.Time{}
	}
	if len(r.seen) >= maxRefusals {
		r.prune(now)
	}
	r.seen[k] = now
	return true
}

// release forgets a turn taken for a call that was admitted.
func (r *refusals) release(source netip.Addr, number string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := refusalKey{source, number}
	if r.seen[k].Equal(at) {
		delete(r.seen, k)
	}
}

// prune drops expired entries, and the oldest half if none had expired.
func (r *refusals) prune(now time.Time) {
	for k, at := range r.seen {
		if now.Sub(at) >= refusalWindow {
			delete(r.seen, k)
		}
	}
	if len(r.seen) < maxRefusals {
		return
	}
	cut := now.Add(-refusalWindow / 2)
	for k, at := range r.seen {
		if at.Before(cut) || len(r.seen) >= maxRefusals {
			delete(r.seen, k)
		}
	}
}

// Enumeration: a scanner that INVITEs number after number must learn
// nothing about which ones exist. When any trunk of the deployment
// requires digest authentication, an INVITE for a number that is unknown,
// unassigned or on no trunk is challenged exactly as one for a number on
// such a trunk (401 with a fresh nonce; credentials never succeed, since
// they are checked against a random password no one has), and a number on
// an authenticating trunk is authenticated before anything else about it
// (its agent, its allow-list) is answered.
type decoy struct {
	once sync.Once
	user string
	pass string

	mu      sync.Mutex
	checked time.Time
	anyAuth bool
}

// anyAuthRecheck is how long whether any trunk authenticates is cached.
const anyAuthRecheck = 10 * time.Second

// challenge answers in as an authenticating trunk answers a caller
// without valid credentials; it never admits the call.
func (d *decoy) challenge(in *sipua.Incoming) {
	d.once.Do(func() {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		d.user, d.pass = hex.EncodeToString(b[:16]), hex.EncodeToString(b[16:])
	})
	in.Authorize(d.user, d.pass)
}

// authenticating reports whether any trunk requires authentication, from
// the store at most every anyAuthRecheck.
func (d *decoy) authenticating(ctx context.Context, st store.Store, now time.Time) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.checked.IsZero() && now.Sub(d.checked) < anyAuthRecheck {
		return d.anyAuth, nil
	}
	var anyAuth bool
	err := st.View(ctx, func(tx store.Tx) error {
		var err error
		anyAuth, err = tx.AnyInboundAuthTrunk(ctx)
		return err
	})
	if err != nil {
		return false, err
	}
	d.anyAuth, d.checked = anyAuth, now
	return anyAuth, nil
}
