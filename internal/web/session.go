package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"github.com/parley-voice/parley/internal/account"
)

// Session cookie names. Over HTTPS the cookie takes the __Host- prefix,
// which browsers accept only when Secure, host-only and for path /.
const (
	cookieName       = "parley_session"
	secureCookieName = "__Host-parley_session"
	csrfField        = "csrf"
	csrfHeader       = "X-CSRF-Token"
)

type principalKey struct{}

// principal is who signed the request in (requireSession put it there).
func principal(r *http.Request) account.Principal {
	p, _ := r.Context().Value(principalKey{}).(account.Principal)
	return p
}

// orgID is the signed-in user's organization: every query is scoped to it.
func orgID(r *http.Request) string { return principal(r).User.OrgID }

func (s *Server) secureRequest(r *http.Request) bool { return s.secure || r.TLS != nil }

func (s *Server) cookieName(r *http.Request) string {
	if s.secureRequest(r) {
		return secureCookieName
	}
	return cookieName
}

// setSession gives the browser its session token.
func (s *Server) setSession(w http.ResponseWriter, r *http.Request, token string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(r), Value: token, Path: "/", Expires: expires,
		HttpOnly: true, Secure: s.secureRequest(r), SameSite: http.SameSiteLaxMode,
	})
}

func (s *Server) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(r), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secureRequest(r), SameSite: http.SameSiteLaxMode,
	})
}

func (s *Server) sessionToken(r *http.Request) string {
	c, err := r.Cookie(s.cookieName(r))
	if err != nil {
		return ""
	}
	return c.Value
}

// requireSession lets signed-in requests through with their principal, and
// checks the CSRF token of every unsafe one. Others go to the sign-in page.
// A user who must replace a one-time password sees only the password page.
func (s *Server) requireSession(passwordPage bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Accounts.Authenticate(r.Context(), s.sessionToken(r))
		switch {
		case errors.Is(err, account.ErrNoSession):
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, "/signin", http.StatusSeeOther)
				return
			}
			s.renderError(w, r, http.StatusForbidden, "You are not signed in, or your session ended. Sign in again.")
			return
		case err != nil:
			s.fail(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		if unsafeMethod(r.Method) && bodyTooLarge(r) {
			s.renderError(w, r, http.StatusRequestEntityTooLarge, "What was sent is larger than this form takes, so nothing was changed. A CSV file may hold at most 16 MiB.")
			return
		}
		if unsafeMethod(r.Method) && !validCSRF(r, p.Session.CSRFToken) {
			s.renderError(w, r, http.StatusForbidden, "This form is out of date or was not sent by this dashboard. Reload the page and try again.")
			return
		}
		if p.User.MustChangePassword && !passwordPage {
			http.Redirect(w, r, "/password", http.StatusSeeOther)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// validCSRF checks the synchronizer token: a form's hidden field or, for
// htmx requests, the X-CSRF-Token header.
func validCSRF(r *http.Request, want string) bool {
	got := r.Header.Get(csrfHeader)
	if got == "" {
		got = r.PostFormValue(csrfField)
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
