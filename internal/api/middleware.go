package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

type loggerKey struct{}
type principalKey struct{}

// principal is who a request acts for: the organization of its API key.
type principal struct {
	OrgID string
	KeyID string
}

func orgID(r *http.Request) string {
	return r.Context().Value(principalKey{}).(*principal).OrgID
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// withRequestID gives every request an id (the caller's X-Request-Id when it
// is sane), answers it in X-Request-Id, and puts a logger carrying it in the
// context.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(id) {
			b := make([]byte, 12)
			rand.Read(b)
			id = "req_" + hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		l := s.log.With("request_id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loggerKey{}, l)))
	})
}

// recorder remembers the status and size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (rec *recorder) WriteHeader(code int) {
	if rec.status == 0 {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += n
	return n, err
}

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// observe logs every request as one structured line and counts it in the
// route's metrics; a panic becomes a logged 500.
func (s *Server) observe(route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		// authenticate fills p in; it is read back here for the log line.
		p := &principal{}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger(r).ErrorContext(r.Context(), "panic", "panic", p, "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeProblem(rec, http.StatusInternalServerError, codeInternal, messageInternal, nil)
				}
			}
			elapsed := time.Since(start)
			code := strconv.Itoa(rec.status)
			s.metrics.requests.WithLabelValues(route, r.Method, code).Inc()
			s.metrics.latency.WithLabelValues(route, r.Method).Observe(elapsed.Seconds())
			attrs := []any{
				"method", r.Method, "path", r.URL.Path, "route", route, "status", rec.status,
				"bytes", rec.bytes, "duration_ms", float64(elapsed.Microseconds()) / 1000, "remote", r.RemoteAddr,
			}
			if p.OrgID != "" {
				attrs = append(attrs, "org_id", p.OrgID)
			}
			logger(r).LogAttrs(r.Context(), slog.LevelInfo, "request", toAttrs(attrs)...)
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

func toAttrs(kv []any) []slog.Attr {
	out := make([]slog.Attr, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, slog.Any(kv[i].(string), kv[i+1]))
	}
	return out
}

// limitBody bounds what a handler can read of the body: reading past
// limit is an *http.MaxBytesError (413). Public routes are bounded too:
// carriers' webhooks need no key.
func limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// authenticate admits requests carrying a live x-api-key and records its
// organization; it then applies the key's rate limit.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := s.orgs.Authenticate(r.Context(), r.Header.Get("x-api-key"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if wait, ok := s.limiter.Allow(key.ID, time.Now()); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
			writeProblem(w, http.StatusTooManyRequests, codeRateLimited, "too many requests for this API key; retry after the Retry-After seconds", nil)
			return
		}
		p := r.Context().Value(principalKey{}).(*principal)
		p.OrgID, p.KeyID = key.OrgID, key.ID
		r = r.WithContext(context.WithValue(r.Context(), loggerKey{}, logger(r).With("org_id", key.OrgID)))
		next.ServeHTTP(w, r)
	})
}

// pathID is the {name} segment of the path when it is a UUID. A malformed id
// names nothing, so it answers 404 like an unknown one.
func pathID(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	id := r.PathValue(name)
	if !model.IsUUID(id) {
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return "", false
	}
	return id, true
}

// pathIDs reads a nested route's two UUID path values (parent, child),
// answering 404 for a malformed one.
func pathIDs(w http.ResponseWriter, r *http.Request, parent, child string) (string, string, bool) {
	p, ok := pathID(w, r, parent)
	if !ok {
		return "", "", false
	}
	c, ok := pathID(w, r, child)
	return p, c, ok
}
