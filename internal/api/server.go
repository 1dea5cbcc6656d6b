package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/ratelimit"
	"github.com/parley-voice/parley/internal/store"
)

// Config is how the API is set up.
type Config struct {
	domain.Services
	// Store is pinged by /healthz and /readyz.
	Store store.Store
	// HealthTimeout bounds their ping, so a database that hangs does not
	// hang the probes (0: defaultHealthTimeout).
	HealthTimeout time.Duration
	// OpenAPI is the contract document served at /v1/openapi.yaml.
	OpenAPI []byte
	Logger  *slog.Logger
	// Registry receives the HTTP metrics and is served at /metrics.
	Registry *prometheus.Registry
	// RateLimit is the requests per second allowed per API key on average
	// (0 disables limiting); RateBurst the bucket size.
	RateLimit float64
	RateBurst int
	// AfterCommit, when set, runs after POST /calls or POST /messages
	// committed and before it answers: the process tests kill the server
	// there (PARLEY_TEST_KILL_AFTER_COMMIT) to prove a retry with the
	// same Idempotency-Key gets the committed resource. Nil in service.
	AfterCommit func()
}

// Server is the HTTP interface.
type Server struct {
	domain.Services
	store   store.Store
	openapi []byte
	log     *slog.Logger
	reg     *prometheus.Registry
	metrics *httpMetrics
	limiter *ratelimit.Limiter
	mux     *http.ServeMux
	orgs    *org.Service
	// afterCommit is Config.AfterCommit, or a no-op.
	afterCommit func()
	// healthTimeout bounds the probes' ping.
	healthTimeout time.Duration
	// draining is set by Drain: the server takes no new work.
	draining atomic.Bool
}

// New builds the server and its route table.
func New(c Config) *Server {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	s := &Server{
		Services: c.Services, store: c.Store, openapi: c.OpenAPI, log: c.Logger, reg: c.Registry,
		metrics: newHTTPMetrics(c.Registry), limiter: ratelimit.New(c.RateLimit, c.RateBurst),
		mux: http.NewServeMux(), orgs: c.Orgs, afterCommit: c.AfterCommit, healthTimeout: c.HealthTimeout,
	}
	if s.healthTimeout <= 0 {
		s.healthTimeout = defaultHealthTimeout
	}
	if s.afterCommit == nil {
		s.afterCommit = func() {}
	}
	for _, rt := range s.routes() {
		var h http.Handler = rt.handler
		if !rt.public {
			h = s.authenticate(h)
		}
		if !rt.query && !rt.public {
			h = refuseQuery(h)
		}
		if !rt.probe {
			h = s.refuseWhileDraining(h)
		}
		limit := int64(maxBody)
		if rt.bodyLimit > 0 {
			limit = rt.bodyLimit
		}
		s.mux.Handle(rt.pattern, s.observe(rt.pattern, limitBody(limit, h)))
	}
	return s
}

// ServeHTTP answers a request, in the house shape also when no route
// matches (404) or the route exists for other methods (405).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.withRequestID(http.HandlerFunc(s.dispatch)).ServeHTTP(w, r)
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	code, allow := http.StatusNotFound, ""
	if canonicalPath(r.URL.EscapedPath()) {
		h, pattern := s.mux.Handler(r)
		if pattern != "" {
			s.mux.ServeHTTP(w, r)
			return
		}
		// Let the mux decide between 404 and 405, then answer in our shape.
		probe := httptest.NewRecorder()
		h.ServeHTTP(probe, r)
		code, allow = probe.Code, probe.Header().Get("Allow")
	}
	s.observe("unmatched", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", allow)
			writeProblem(w, http.StatusMethodNotAllowed, codeMethodNotAllowed, r.Method+" is not allowed here; allowed: "+allow, nil)
			return
		}
		writeProblem(w, http.StatusNotFound, codeNotFound, messageRouteNotFound, nil)
	})).ServeHTTP(w, r)
}

// canonicalPath reports whether p (escaped) is a path a route could name:
// absolute, with no empty, "." or ".." segment, escaped or not. The mux
// would answer the others with a redirect to the cleaned path, so
// "/v1/agents/../calls" would reach GET /v1/calls; they are 404 instead.
func canonicalPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if u, err := url.PathUnescape(seg); seg == "" || err != nil || u == "." || u == ".." {
			return false
		}
	}
	return true
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.openapi)
}

func (s *Server) serveMetrics() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})
}
