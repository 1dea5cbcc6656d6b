// Package ratelimit is a token bucket per key (an API key, a client
// address, an email being signed in with), kept in memory.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter is a token bucket per key: rate requests a second on
// average, bursts up to burst. Buckets idle long enough to be full again are
// dropped, so memory follows the active keys. It is safe for concurrent use.
type Limiter struct {
	rate  float64
	burst float64

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a limiter; rate <= 0 disables limiting.
func New(rate float64, burst int) *Limiter {
	if burst < 1 {
		burst = 1
	}
	return &Limiter{rate: rate, burst: float64(burst), buckets: map[string]*bucket{}}
}

// Allow takes a token from key's bucket, or says how long until one is there.
func (l *Limiter) Allow(key string, now time.Time) (time.Duration, bool) {
	if l.rate <= 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
}

func (l *Limiter) sweep(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	if now.Sub(l.swept) < full {
		return
	}
	l.swept = now
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
}
