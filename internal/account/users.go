package account

import (
	"context"
	"errors"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Users lists a page of the organization's users.
func (s *Service) Users(ctx context.Context, orgID string, p store.Page) ([]model.User, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.User, int, error) { return tx.ListUsers(ctx, orgID, p) })
}

// AddUser creates a user with email in the organization and returns their
// one-time password, as CreateUser does for an organization by name.
func (s *Service) AddUser(ctx context.Context, orgID, email string) (string, model.User, error) {
	email = NormalizeEmail(email)
	if p := checkEmail(email); p != "" {
		return "", model.User{}, invalid.One("email", "%s", p)
	}
	var (
		password string
		u        model.User
	)
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		password, u, err = createUser(ctx, tx, orgID, email)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return "", model.User{}, &invalid.Conflict{Message: "a user with this email exists"}
	}
	return password, u, err
}

// ResetPassword gives another user of the organization a new one-time
// password, to be replaced at their next sign-in, and ends their sessions:
// whoever knew the old password is signed out. by is the user asking;
// their own password is changed by ChangePassword, which checks the
// current one.
func (s *Service) ResetPassword(ctx context.Context, orgID, by, id string) (string, model.User, error) {
	if id == by {
		return "", model.User{}, &invalid.Conflict{Message: "you cannot reset your own password here: change it instead"}
	}
	password := newOneTimePassword()
	hash := hashPassword(password)
	var u model.User
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if err := tx.SetUserPassword(ctx, orgID, id, hash, true); err != nil {
			return err
		}
		if err := tx.DeleteUserSessions(ctx, orgID, id); err != nil {
			return err
		}
		var err error
		u, err = tx.GetUser(ctx, orgID, id)
		return err
	})
	if err != nil {
		return "", model.User{}, err
	}
	return password, u, nil
}

// ResetPasswordByEmail gives the user who signs in with email a new
// one-time password, to be replaced at their next sign-in, and ends their
// sessions. It is the operator's way back in (parley users
// reset-password) when nobody can sign in to reset it from the dashboard;
// no user with that email: store.ErrNotFound.
func (s *Service) ResetPasswordByEmail(ctx context.Context, email string) (string, model.User, error) {
	password := newOneTimePassword()
	hash := hashPassword(password)
	var u model.User
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		found, err := tx.GetUserByEmail(ctx, NormalizeEmail(email))
		if err != nil {
			return err
		}
		if err := tx.SetUserPassword(ctx, found.OrgID, found.ID, hash, true); err != nil {
			return err
		}
		if err := tx.DeleteUserSessions(ctx, found.OrgID, found.ID); err != nil {
			return err
		}
		u, err = tx.GetUser(ctx, found.OrgID, found.ID)
		return err
	})
	if err != nil {
		return "", model.User{}, err
	}
	return password, u, nil
}

// RemoveUser deletes another user of the organization, and with them
// their sessions. by is the user asking, who cannot remove themselves
// (an organization keeps someone who can sign in).
func (s *Service) RemoveUser(ctx context.Context, orgID, by, id string) error {
	if id == by {
		return &invalid.Conflict{Message: "you cannot remove yourself"}
	}
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteUser(ctx, orgID, id) })
}
