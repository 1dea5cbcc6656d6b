package account

import (
	"context"
	"errors"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// tokenLen is a session token's and a CSRF token's length in base62
// characters: 256 random bits.
const tokenLen = 43

// ErrNoSession: the session token is missing, unknown or expired.
var ErrNoSession = errors.New("not signed in")

// Principal is who a session speaks for.
type Principal struct {
	Session model.Session
	User    model.User
}

// SignIn checks email and password and opens a session; it returns the
// session's token (for the cookie, never stored) and who signed in.
// A wrong email and a wrong password are both ErrBadCredentials, and take
// as long to answer.
func (s *Service) SignIn(ctx context.Context, email, password string) (string, Principal, error) {
	email = NormalizeEmail(email)
	if invalid.Text(email) != "" || invalid.Len(email) > MaxEmailLen || invalid.Len(password) > MaxPasswordLen {
		return "", Principal{}, ErrBadCredentials
	}
	u, err := store.Read(ctx, s.Store, func(tx store.Tx) (model.User, error) { return tx.GetUserByEmail(ctx, email) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		checkPassword(decoyHash, password)
		return "", Principal{}, ErrBadCredentials
	case err != nil:
		return "", Principal{}, err
	}
	ok, err := checkPassword(u.PasswordHash, password)
	if err != nil {
		return "", Principal{}, err
	}
	if !ok {
		return "", Principal{}, ErrBadCredentials
	}
	var (
		token string
		sess  model.Session
	)
	err = s.Store.Update(ctx, func(tx store.Tx) (err error) {
		// Expired sessions go as new ones come: no sweeper to own.
		if _, err = tx.DeleteExpiredSessions(ctx, time.Now()); err != nil {
			return err
		}
		token, sess, err = s.openSession(ctx, tx, u)
		return err
	})
	if err != nil {
		return "", Principal{}, err
	}
	return token, Principal{Session: sess, User: u}, nil
}

func (s *Service) openSession(ctx context.Context, tx store.Tx, u model.User) (string, model.Session, error) {
	ttl := s.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	token := secret.Token("", tokenLen)
	now := model.Now()
	sess := model.Session{
		ID: model.NewID(), OrgID: u.OrgID, UserID: u.ID, Hash: secret.Hash(token),
		CSRFToken: secret.Token("", tokenLen), CreatedAt: now, ExpiresAt: now.Add(ttl),
	}
	return token, sess, tx.CreateSession(ctx, &sess)
}

// Authenticate finds the live session whose token is token, and its user.
func (s *Service) Authenticate(ctx context.Context, token string) (Principal, error) {
	if len(token) != tokenLen {
		return Principal{}, ErrNoSession
	}
	var p Principal
	err := s.Store.View(ctx, func(tx store.Tx) (err error) {
		if p.Session, err = tx.GetSessionByHash(ctx, secret.Hash(token)); err != nil {
			return err
		}
		p.User, err = tx.GetUser(ctx, p.Session.OrgID, p.Session.UserID)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Principal{}, ErrNoSession
	case err != nil:
		return Principal{}, err
	case !time.Now().Before(p.Session.ExpiresAt):
		return Principal{}, ErrNoSession
	}
	return p, nil
}

// SignOut ends the session whose token is token; an unknown one is not an
// error.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteSession(ctx, secret.Hash(token)) })
}

// ChangePassword sets the signed-in user's password after checking their
// current one, ends every session of the user (a password is changed
// because it may be known to someone else) and opens a new one for this
// browser, whose token it returns. Field errors name "currentPassword" and
// "newPassword".
func (s *Service) ChangePassword(ctx context.Context, p Principal, current, next string) (string, Principal, error) {
	var l invalid.List
	if msg := checkNewPassword(next); msg != "" {
		l.Add("newPassword", "%s", msg)
	} else if next == current {
		l.Add("newPassword", "must differ from the current password")
	}
	u, err := s.Get(ctx, p.User.OrgID, p.User.ID)
	if err != nil {
		return "", Principal{}, err
	}
	if ok, err := checkPassword(u.PasswordHash, current); err != nil {
		return "", Principal{}, err
	} else if !ok {
		l.Add("currentPassword", "is not your current password")
	}
	if err := l.Err(); err != nil {
		return "", Principal{}, err
	}
	var (
		token string
		sess  model.Session
	)
	hash := hashPassword(next)
	err = s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if err = tx.SetUserPassword(ctx, u.OrgID, u.ID, hash, false); err != nil {
			return err
		}
		if err = tx.DeleteUserSessions(ctx, u.OrgID, u.ID); err != nil {
			return err
		}
		if u, err = tx.GetUser(ctx, u.OrgID, u.ID); err != nil {
			return err
		}
		token, sess, err = s.openSession(ctx, tx, u)
		return err
	})
	if err != nil {
		return "", Principal{}, err
	}
	return token, Principal{Session: sess, User: u}, nil
}
