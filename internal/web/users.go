package web

import (
	"errors"
	"net/http"

	"github.com/parley-voice/parley/internal/account"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
)

// usersData is the organization's users with the form adding one.
type usersData struct {
	Users []model.User
	// Me is the signed-in user, who cannot reset or remove themselves.
	Me       string
	Email    string
	MaxEmail int
	Errors   fieldErrors
	Message  string
	// Issued is a one-time password just made, shown on this one answer only.
	Issued *issuedPassword
	Pager  pager
}

// issuedPassword is a user's new one-time password.
type issuedPassword struct {
	Email, Password string
	Reset           bool
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) {
	s.renderUsers(w, r, http.StatusOK, usersData{})
}

func (s *Server) renderUsers(w http.ResponseWriter, r *http.Request, status int, d usersData) {
	pg, problems := adminPage(r)
	users, total, err := s.Accounts.Users(r.Context(), orgID(r), pg)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Users, d.Me, d.MaxEmail, d.Pager = users, principal(r).User.ID, account.MaxEmailLen, newPager(r.URL, pg, total, problems)
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "users", "Users", "users", d)
}

// addUser creates a user and shows their one-time password in this
// answer, never again: they replace it at first sign-in.
func (s *Server) addUser(w http.ResponseWriter, r *http.Request) {
	email := r.PostFormValue("email")
	password, u, err := s.Accounts.AddUser(r.Context(), orgID(r), email)
	if err != nil {
		s.usersRefused(w, r, usersData{Email: email}, err)
		return
	}
	s.renderUsers(w, r, http.StatusCreated, usersData{Issued: &issuedPassword{Email: u.Email, Password: password}})
}

func (s *Server) confirmResetPassword(w http.ResponseWriter, r *http.Request) {
	u, ok := s.otherUser(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Reset password of "+u.Email, "users", confirmData{
		Question: "Give " + u.Email + " a new one-time password? Their current password stops working and they are signed out everywhere.",
		Action:   "/users/" + u.ID + "/reset", Button: "Reset password", Cancel: "/users",
	})
}

func (s *Server) resetPassword(w http.ResponseWriter, r *http.Request) {
	password, u, err := s.Accounts.ResetPassword(r.Context(), orgID(r), principal(r).User.ID, r.PathValue("id"))
	if err != nil {
		s.usersRefused(w, r, usersData{}, err)
		return
	}
	s.renderUsers(w, r, http.StatusOK, usersData{Issued: &issuedPassword{Email: u.Email, Password: password, Reset: true}})
}

func (s *Server) confirmRemoveUser(w http.ResponseWriter, r *http.Request) {
	u, ok := s.otherUser(w, r)
	if !ok {
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Remove "+u.Email, "users", confirmData{
		Question: "Remove " + u.Email + " from this organization? They are signed out and can no longer sign in.",
		Action:   "/users/" + u.ID + "/delete", Button: "Remove user", Cancel: "/users",
	})
}

func (s *Server) removeUser(w http.ResponseWriter, r *http.Request) {
	if err := s.Accounts.RemoveUser(r.Context(), orgID(r), principal(r).User.ID, r.PathValue("id")); err != nil {
		s.usersRefused(w, r, usersData{}, err)
		return
	}
	http.Redirect(w, r, "/users", http.StatusSeeOther)
}

// otherUser is the user the path names, for a confirmation page: another
// organization's is not found, and the signed-in user is sent back to the
// list, which explains why.
func (s *Server) otherUser(w http.ResponseWriter, r *http.Request) (model.User, bool) {
	u, err := s.Accounts.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return model.User{}, false
	}
	if u.ID == principal(r).User.ID {
		s.renderUsers(w, r, http.StatusConflict, usersData{Message: "You cannot reset your own password or remove yourself here. Change your password on its own page."})
		return model.User{}, false
	}
	return u, true
}

// usersRefused shows the list again with what the service refused: a
// field error, a conflict (an email in use, yourself), or not found.
func (s *Server) usersRefused(w http.ResponseWriter, r *http.Request, d usersData, err error) {
	var (
		bad      *invalid.Error
		conflict *invalid.Conflict
	)
	switch {
	case errors.As(err, &bad):
		d.Errors = errorsByField(bad.Fields)
		s.renderUsers(w, r, http.StatusBadRequest, d)
	case errors.As(err, &conflict):
		d.Message = conflict.Message
		s.renderUsers(w, r, http.StatusConflict, d)
	default:
		s.failFind(w, r, err)
	}
}
