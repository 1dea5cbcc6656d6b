package app

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

// apiPaths are served by the JSON API; everything else is the dashboard's.
func apiPath(p string) bool {
	return probePath(p) || p == "/v1" || strings.HasPrefix(p, "/v1/")
}

// probePath: the health, readiness and metrics checks, answered until the
// HTTP server closes, draining or not.
func probePath(p string) bool {
	return p == "/healthz" || p == "/readyz" || p == "/metrics"
}

// door serves the API under /v1 (and the probes) and the dashboard at every
// other path, and counts the requests inside, so that a shutdown can wait
// for them and still answer the probes while live calls finish.
type door struct {
	api, dashboard http.Handler
	mu             sync.Mutex
	closed         bool
	inside         sync.WaitGroup // Add only while open, under mu
}

func httpHandler(api, dashboard http.Handler) *door {
	return &door{api: api, dashboard: dashboard}
}

func (d *door) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if probePath(p) {
		d.api.ServeHTTP(w, r)
		return
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.refuse(w, r)
		return
	}
	d.inside.Add(1)
	d.mu.Unlock()
	defer d.inside.Done()
	if apiPath(p) {
		d.api.ServeHTTP(w, r)
		return
	}
	d.dashboard.ServeHTTP(w, r)
}

// refuse answers a request that came after close: the API, draining,
// answers 503 unavailable in its shape; the dashboard a short 503.
func (d *door) refuse(w http.ResponseWriter, r *http.Request) {
	if apiPath(r.URL.Path) {
		d.api.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Retry-After", "5")
	http.Error(w, "Parley is shutting down. Try again in a few seconds.", http.StatusServiceUnavailable)
}

// close lets no new request in (but the probes) and waits until the
// requests inside are answered, or ctx ends (its error).
func (d *door) close(ctx context.Context) error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	answered := make(chan struct{})
	go func() { // ends when the last request inside does
		d.inside.Wait()
		close(answered)
	}()
	select {
	case <-answered:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
