package web

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/ratelimit"
)

// maxForm bounds a request body: the API's own limit.
const maxForm = 1 << 20

//go:embed templates static
var assets embed.FS

// Limit is a token bucket: Rate attempts a second on average, bursts of Burst.
type Limit struct {
	Rate  float64
	Burst int
}

// Default sign-in limits: ten attempts a minute per client address, five
// a minute per email, each after a burst of that size.
var (
	DefaultSignInPerAddr  = Limit{Rate: 10.0 / 60, Burst: 10}
	DefaultSignInPerEmail = Limit{Rate: 5.0 / 60, Burst: 5}
)

// Config is how the dashboard is set up.
type Config struct {
	domain.Services
	Logger *slog.Logger
	// PublicURL is the base URL users reach Parley at: an https one makes
	// the session cookie Secure, and its origin is trusted for forms.
	PublicURL string
	// SignInPerAddr and SignInPerEmail limit sign-in attempts (zero: the
	// defaults).
	SignInPerAddr, SignInPerEmail Limit
	// Now is the clock of the rate limits (nil: time.Now).
	Now func() time.Time
}

// Server is the dashboard's HTTP handler.
type Server struct {
	domain.Services
	log          *slog.Logger
	pages        pages
	mux          *http.ServeMux
	secure       bool
	crossOrigin  *http.CrossOriginProtection
	perAddr      *ratelimit.Limiter
	perEmail     *ratelimit.Limiter
	now          func() time.Time
	staticServer http.Handler
}

// New builds the dashboard and its route table.
func New(c Config) (*Server, error) {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.SignInPerAddr == (Limit{}) {
		c.SignInPerAddr = DefaultSignInPerAddr
	}
	if c.SignInPerEmail == (Limit{}) {
		c.SignInPerEmail = DefaultSignInPerEmail
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Services: c.Services, log: c.Logger, pages: p, mux: http.NewServeMux(),
		secure:      strings.HasPrefix(strings.ToLower(c.PublicURL), "https://"),
		crossOrigin: http.NewCrossOriginProtection(),
		perAddr:     ratelimit.New(c.SignInPerAddr.Rate, c.SignInPerAddr.Burst),
		perEmail:    ratelimit.New(c.SignInPerEmail.Rate, c.SignInPerEmail.Burst),
		now:         c.Now, staticServer: http.FileServerFS(static),
	}
	if u, err := url.Parse(c.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		if err := s.crossOrigin.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, err
		}
	}
	s.crossOrigin.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.renderError(w, r, http.StatusForbidden, "This form was sent from another site, so it was refused.")
	}))
	for _, rt := range s.routes() {
		h := rt.handler
		if !rt.public {
			h = s.requireSession(rt.passwordPage, h)
		}
		s.mux.Handle(rt.pattern, limitBody(rt.maxBody, s.crossOrigin.Handler(h)))
	}
	return s, nil
}

// ServeHTTP answers a dashboard request with the security headers every
// page carries, and an HTML 404 or 405 when no route matches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Nothing but Parley's own origin: no inline script or style, no frames.
	h.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	if _, pattern := s.mux.Handler(r); pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	probe := httptest.NewRecorder()
	handler, _ := s.mux.Handler(r)
	handler.ServeHTTP(probe, r)
	if probe.Code == http.StatusMethodNotAllowed {
		h.Set("Allow", probe.Header().Get("Allow"))
		s.renderError(w, r, http.StatusMethodNotAllowed, "This page does not take "+r.Method+" requests.")
		return
	}
	s.renderError(w, r, http.StatusNotFound, "There is no such page.")
}

// limitBody bounds a route's request body: max bytes, or maxForm when 0
// (file uploads take more).
func limitBody(max int64, next http.Handler) http.Handler {
	if max == 0 {
		max = maxForm
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, max)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.StripPrefix("/static", s.staticServer).ServeHTTP(w, r)
}
