package sipua

import (
	"math"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/sipgo/sip"
)

// Admission before work: a flood of requests from one address must cost
// Parley a datagram read and a 503, never a database query, a record or a
// webhook. Each source address has a token bucket; requests that start
// something (an INVITE outside a dialog, REGISTER, OPTIONS) take a token,
// and with none left are answered 503 Service Unavailable with
// Retry-After before any handler runs. Requests inside a dialog (ACK,
// BYE, re-INVITE, INFO) are never refused: they end or steer calls
// already admitted.

// Admission configures the per-source limit. The zero value admits every
// request.
type Admission struct {
	// Rate is the requests per second one source address may send on
	// average; 0 turns the limit off.
	Rate float64
	// Burst is how many it may send at once (default: 5 s worth of Rate,
	// at least 1).
	Burst int
	// Exempt, when set, lets a request through whatever its source sent
	// before: the phone's own INVITEs over the loopback trunk, which carry
	// a token only the server can sign. It gets the request's header
	// values and must not block.
	Exempt func(header func(name string) string) bool
	// ExemptSources are addresses whose requests are never limited: the
	// carrier's SBC or a proxy that sends every call from one address at
	// its whole peak call rate, or a load generator. Every other source
	// keeps its bucket.
	ExemptSources []netip.Prefix
}

const (
	// maxSources bounds the buckets kept; past it, sources not yet seen
	// share one bucket (a flood from many forged addresses is then limited
	// as one source).
	maxSources = 1 << 16
	// sweepEvery is how often buckets that have refilled are forgotten.
	sweepEvery = 10 * time.Second
)

// admission is the per-source token buckets of a UA.
type admission struct {
	rate, burst float64
	now         func() time.Time
	exempt      func(header func(name string) string) bool
	trusted     []netip.Prefix // Admission.ExemptSources

	mu        sync.Mutex
	buckets   map[netip.Addr]*bucket
	overflow  bucket
	lastSweep time.Time

	admitted, refused atomic.Uint64
}

type bucket struct {
	tokens float64
	at     time.Time
}

// newAdmission returns the limiter for c, or nil when it is off.
func newAdmission(c Admission) *admission {
	if c.Rate <= 0 {
		return nil
	}
	burst := float64(c.Burst)
	if burst <= 0 {
		burst = max(1, math.Round(5*c.Rate))
	}
	return &admission{rate: c.Rate, burst: burst, now: time.Now, exempt: c.Exempt, trusted: c.ExemptSources, buckets: map[netip.Addr]*bucket{}}
}

// allow takes a token of src's bucket; when there is none it says how
// long until there is. An exempt source has no bucket.
func (a *admission) allow(src netip.Addr) (bool, time.Duration) {
	for _, p := range a.trusted {
		if p.Contains(src) {
			a.admitted.Add(1)
			return true, 0
		}
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if now.Sub(a.lastSweep) >= sweepEvery {
		a.sweep(now)
	}
	b, ok := a.buckets[src]
	if !ok {
		if len(a.buckets) >= maxSources {
			b = &a.overflow
		} else {
			b = &bucket{tokens: a.burst, at: now}
			a.buckets[src] = b
		}
	}
	b.tokens = min(a.burst, b.tokens+now.Sub(b.at).Seconds()*a.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		a.admitted.Add(1)
		return true, 0
	}
	a.refused.Add(1)
	return false, time.Duration((1 - b.tokens) / a.rate * float64(time.Second))
}

// sweep forgets the buckets that are full again: a new bucket would be
// the same.
func (a *admission) sweep(now time.Time) {
	a.lastSweep = now
	for src, b := range a.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*a.rate >= a.burst {
			delete(a.buckets, src)
		}
	}
}

// startsSomething reports whether req is subject to admission: a request
// outside any dialog that would make Parley do work.
func startsSomething(req *sip.Request) bool {
	switch req.Method {
	case sip.INVITE:
		to := req.To()
		return to == nil || !to.Params.Has("tag")
	case sip.REGISTER, sip.OPTIONS, sip.SUBSCRIBE, sip.MESSAGE:
		return true
	}
	return false
}

// refuse answers a request over its source's limit: 503 and when to try
// again, in whole seconds (at least 1).
func refuse(req *sip.Request, tx sip.ServerTransaction, retry time.Duration) {
	res := sip.NewResponseFromRequest(req, 503, "Service Unavailable", nil)
	res.AppendHeader(sip.NewHeader("Retry-After", strconv.Itoa(max(1, int(math.Ceil(retry.Seconds()))))))
	_ = tx.Respond(res)
}

// AdmissionCounts are the requests admitted and refused by the
// per-source limit since the UA started (both 0 when it is off).
func (u *UA) AdmissionCounts() (admitted, refused uint64) {
	if u.admit == nil {
		return 0, 0
	}
	return u.admit.admitted.Load(), u.admit.refused.Load()
}

// sourceAddr is the address a request came from (invalid when unknown).
func sourceAddr(req *sip.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(req.Source())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// admits reports whether req may go on, answering it 503 when not.
func (a *admission) admits(req *sip.Request, tx sip.ServerTransaction) bool {
	if !startsSomething(req) {
		return true
	}
	if a.exempt != nil && a.exempt(func(name string) string {
		if h := req.GetHeader(name); h != nil {
			return h.Value()
		}
		return ""
	}) {
		return true
	}
	ok, retry := a.allow(sourceAddr(req))
	if !ok {
		refuse(req, tx, retry)
	}
	return ok
}
