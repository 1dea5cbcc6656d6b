package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// pages are the parsed templates, one per page, each with the layout.
type pages map[string]*template.Template

var funcs = template.FuncMap{
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"add":  func(a, b int) int { return a + b },
	"join": strings.Join,
}

func parsePages() (pages, error) {
	names, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := pages{}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/partials/*.html", name)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		p[base] = t
	}
	return p, nil
}

// view is what every page's template gets: who is signed in (if anyone),
// the CSRF token for its forms, the section the navigation highlights,
// and the page's own data.
type view struct {
	Title   string
	Section string
	User    string
	CSRF    string
	Data    any
}

// render writes page with status, in the layout.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page, title, section string, data any) {
	t, ok := s.pages[page]
	if !ok {
		s.fail(w, r, fmt.Errorf("no template for page %q", page))
		return
	}
	v := view{Title: title, Section: section, Data: data}
	if p := principal(r); p.User.ID != "" {
		v.User, v.CSRF = p.User.Email, p.Session.CSRFToken
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.ErrorContext(r.Context(), "render page", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// renderError answers an error page with status and a message for people.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, status int, message string) {
	s.render(w, r, status, "error", http.StatusText(status), "", message)
}

// fail answers an unexpected error: logged, never shown. A database that
// cannot take the work right now is an outage, not a bug: 503, with
// Retry-After, logged at warn.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrUnavailable) {
		s.log.WarnContext(r.Context(), "dashboard request failed: database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", retryAfterUnavailable)
		s.renderError(w, r, http.StatusServiceUnavailable, messageUnavailable)
		return
	}
	s.log.ErrorContext(r.Context(), "dashboard request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	s.renderError(w, r, http.StatusInternalServerError, "Something went wrong on our side. Try again; if it persists, the server's log says why.")
}

// What a page says while the database is unavailable, and when to try
// again (seconds), as the API's 503 does.
const (
	messageUnavailable    = "The database is unavailable right now. Nothing was changed; try again in a few seconds."
	retryAfterUnavailable = "5"
)

// errNotFound is a lookup that found nothing in the organization.
var errNotFound = fmt.Errorf("web: %w", store.ErrNotFound)
