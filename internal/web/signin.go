package web

import (
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/parley-voice/parley/internal/account"
	"github.com/parley-voice/parley/internal/invalid"
)

type signInData struct {
	Email string
	Error string
}

func (s *Server) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, err := s.Accounts.Authenticate(r.Context(), s.sessionToken(r)); err == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, "signin", "Sign in", "", signInData{})
}

// signIn checks the credentials under two rate limits (the client's
// address, and the email tried, so neither many addresses nor many emails
// get unlimited guesses) and opens a session.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	email, password := r.PostFormValue("email"), r.PostFormValue("password")
	now := s.now()
	waitAddr, okAddr := s.perAddr.Allow(clientAddr(r), now)
	waitEmail, okEmail := s.perEmail.Allow(account.NormalizeEmail(email), now)
	if !okAddr || !okEmail {
		wait := max(waitAddr, waitEmail)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		s.render(w, r, http.StatusTooManyRequests, "signin", "Sign in", "", signInData{
			Email: email, Error: "Too many sign-in attempts. Wait " + wait.Round(time.Second).String() + " and try again.",
		})
		return
	}
	token, p, err := s.Accounts.SignIn(r.Context(), email, password)
	if errors.Is(err, account.ErrBadCredentials) {
		s.render(w, r, http.StatusUnauthorized, "signin", "Sign in", "", signInData{Email: email, Error: "The email or the password is wrong."})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.setSession(w, r, token, p.Session.ExpiresAt)
	if p.User.MustChangePassword {
		http.Redirect(w, r, "/password", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// clientAddr is the address the request came from. Forwarding headers are
// not trusted: anyone can send them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if err := s.Accounts.SignOut(r.Context(), s.sessionToken(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	s.clearSession(w, r)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

type passwordData struct {
	MustChange bool
	Min, Max   int
	Errors     fieldErrors
}

func (s *Server) passwordPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "password", "Choose a password", "", passwordData{
		MustChange: principal(r).User.MustChangePassword, Min: account.MinPasswordLen, Max: account.MaxPasswordLen,
	})
}

func (s *Server) changePassword(w http.ResponseWriter, r *http.Request) {
	current, next := r.PostFormValue("currentPassword"), r.PostFormValue("newPassword")
	data := passwordData{MustChange: principal(r).User.MustChangePassword, Min: account.MinPasswordLen, Max: account.MaxPasswordLen}
	if next != r.PostFormValue("confirmPassword") {
		data.Errors = fieldErrors{"confirmPassword": {"must repeat the new password exactly"}}
		s.render(w, r, http.StatusBadRequest, "password", "Choose a password", "", data)
		return
	}
	token, p, err := s.Accounts.ChangePassword(r.Context(), principal(r), current, next)
	var bad *invalid.Error
	if errors.As(err, &bad) {
		data.Errors = errorsByField(bad.Fields)
		s.render(w, r, http.StatusBadRequest, "password", "Choose a password", "", data)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.setSession(w, r, token, p.Session.ExpiresAt)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/agents", http.StatusSeeOther)
}
