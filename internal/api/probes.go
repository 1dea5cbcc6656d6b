package api

import (
	"context"
	"net/http"
	"time"
)

// defaultHealthTimeout bounds the probes' ping of the database: a load
// balancer's check gets its answer in time even from a database that hangs.
const defaultHealthTimeout = 2 * time.Second

// health answers 200 while the database answers: the server is alive.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := s.ping(r.Context()); err != nil {
		logger(r).ErrorContext(r.Context(), "health check: database does not answer", "err", err)
		writeProblem(w, http.StatusServiceUnavailable, codeUnavailable, "the database does not answer", nil)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ready answers 200 while the server takes new calls: not draining, and its
// database answers (conventions.md, "Serving on several machines").
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	if err := s.ping(r.Context()); err != nil {
		logger(r).WarnContext(r.Context(), "readiness check: database does not answer", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// ping pings the store within the health timeout.
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.healthTimeout)
	defer cancel()
	return s.store.Ping(ctx)
}

// Drain makes the server take no new work, for a shutdown that lets live
// calls finish: /readyz answers 503 draining, so a load balancer sends
// nothing more, and every route but the probes answers 503 unavailable
// with Retry-After. Requests already being served go on.
func (s *Server) Drain() { s.draining.Store(true) }

// refuseWhileDraining answers next's requests 503 once Drain was called.
func (s *Server) refuseWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			writeUnavailable(w, messageShuttingDown)
			return
		}
		next.ServeHTTP(w, r)
	})
}
