package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// Limits of accounts.
const (
	MaxEmailLen       = 254
	MinPasswordLen    = 12
	MaxPasswordLen    = 256
	oneTimePasswordN  = 24 // base62 characters: about 143 bits
	DefaultSessionTTL = 7 * 24 * time.Hour
	// BootstrapEmail is the first start's dashboard user.
	BootstrapEmail = "admin@localhost"
)

// ErrBadCredentials: no user has this email, or the password is wrong
// (the caller is not told which).
var ErrBadCredentials = errors.New("the email or the password is wrong")

// Service manages users and their sessions.
type Service struct {
	Store store.Store
	// Orgs creates the organization a new user names, when it is new.
	Orgs *org.Service
	// SessionTTL is how long a session lasts from sign-in (0: DefaultSessionTTL).
	SessionTTL time.Duration
}

// NormalizeEmail is the form an email is stored and looked up in.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// checkEmail reports what is wrong with a normalized email, or "".
func checkEmail(email string) string {
	if p := invalid.Text(email); p != "" {
		return p
	}
	if email == "" || invalid.Len(email) > MaxEmailLen {
		return fmt.Sprintf("must be 1 to %d characters", MaxEmailLen)
	}
	// A bare address (no display name), with a local part and a domain.
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" {
		return "must be an email address such as ada@example.com"
	}
	return ""
}

// CreateUser creates a user with email in the organization named orgName,
// creating the organization when it is new, and returns the user's
// one-time password: shown this once, it must be replaced at first sign-in.
func (s *Service) CreateUser(ctx context.Context, orgName, email string) (string, model.User, error) {
	email = NormalizeEmail(email)
	if p := checkEmail(email); p != "" {
		return "", model.User{}, invalid.One("email", "%s", p)
	}
	var (
		password string
		u        model.User
	)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		o, err := s.Orgs.EnsureOrg(ctx, tx, orgName)
		if err != nil {
			return err
		}
		password, u, err = createUser(ctx, tx, o.ID, email)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return "", model.User{}, &invalid.Conflict{Message: "a user with this email exists"}
	}
	return password, u, err
}

// newOneTimePassword is a password made for a user to replace at first
// sign-in.
func newOneTimePassword() string { return secret.Token("", oneTimePasswordN) }

func createUser(ctx context.Context, tx store.Tx, orgID, email string) (string, model.User, error) {
	password := newOneTimePassword()
	now := model.Now()
	u := model.User{
		ID: model.NewID(), OrgID: orgID, Email: email, PasswordHash: hashPassword(password),
		MustChangePassword: true, CreatedAt: now, UpdatedAt: now,
	}
	return password, u, tx.CreateUser(ctx, &u)
}

// Login is a dashboard sign-in created for the operator.
type Login struct {
	Email, Password string
}

// Bootstrap prepares an empty database, in one transaction: when there is
// no API key at all it creates organization "default" with one key (as
// org.Service.Bootstrap does) and, when there is no user either, a
// dashboard user BootstrapEmail in it with a one-time password. It returns
// what it created; a database in use gets "" and a zero Login.
func (s *Service) Bootstrap(ctx context.Context) (string, Login, error) {
	var (
		token string
		login Login
	)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		var (
			o   model.Organization
			err error
		)
		token, o, err = s.Orgs.BootstrapTx(ctx, tx)
		if err != nil || token == "" {
			return err
		}
		n, err := tx.CountUsers(ctx)
		if err != nil || n > 0 {
			return err
		}
		login.Email = BootstrapEmail
		login.Password, _, err = createUser(ctx, tx, o.ID, BootstrapEmail)
		return err
	})
	if err != nil {
		return "", Login{}, err
	}
	return token, login, nil
}

// Get returns the organization's user.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.User, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.User, error) { return tx.GetUser(ctx, orgID, id) })
}

// checkNewPassword reports what is wrong with a password a user chose.
func checkNewPassword(password string) string {
	if p := invalid.Text(password); p != "" {
		return p
	}
	n := invalid.Len(password)
	if n < MinPasswordLen || n > MaxPasswordLen {
		return fmt.Sprintf("must be %d to %d characters", MinPasswordLen, MaxPasswordLen)
	}
	if strings.TrimSpace(password) == "" {
		return "must not be only spaces"
	}
	return ""
}
