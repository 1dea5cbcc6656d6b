package account

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

func newService(t *testing.T) *Service {
	t.Helper()
	st := sqlitetest.Open(t)
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return &Service{Store: st, Orgs: &org.Service{Store: st, Box: box, DefaultConcurrencyLimit: 10}}
}

func TestPasswordHash(t *testing.T) {
	h := hashPassword("hunter2 hunter2")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash = %q", h)
	}
	if h == hashPassword("hunter2 hunter2") {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"hunter2 hunter2": true, "hunter2 hunter3": false, "": false} {
		ok, err := checkPassword(h, pw)
		if err != nil || ok != want {
			t.Errorf("check %q = %v, %v; want %v", pw, ok, err, want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=18$m=19456,t=2,p=1$c2FsdA$aGFzaA",
		"$argon2id$v=19$m=0,t=2,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=19456,t=2,p=1$!!$aGFzaA", "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaA"} {
		if _, err := checkPassword(bad, "x"); !errors.Is(err, errBadHash) {
			t.Errorf("check against %q: %v, want errBadHash", bad, err)
		}
	}
}

func TestCreateUserAndSignIn(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	pw, u, err := s.CreateUser(ctx, "acme", "  Ada@Example.COM ")
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "ada@example.com" || !u.MustChangePassword || len(pw) != oneTimePasswordN {
		t.Fatalf("user %+v, password %q", u, pw)
	}
	var conflict *invalid.Conflict
	if _, _, err := s.CreateUser(ctx, "globex", "ADA@example.com"); !errors.As(err, &conflict) {
		t.Fatalf("same email in another organization: %v, want a conflict", err)
	}
	for _, email := range []string{"", "ada", "Ada <ada@example.com>", "ada@example.com\x00", strings.Repeat("a", 250) + "@x.io"} {
		var bad *invalid.Error
		if _, _, err := s.CreateUser(ctx, "acme", email); !errors.As(err, &bad) || bad.Fields[0].Name != "email" {
			t.Errorf("email %q: %v, want a field error on email", email, err)
		}
	}
	for _, c := range []struct{ email, pw string }{{"ada@example.com", "wrong"}, {"bob@example.com", pw}, {"ada@example.com", ""}} {
		if _, _, err := s.SignIn(ctx, c.email, c.pw); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("sign in %q/%q: %v, want ErrBadCredentials", c.email, c.pw, err)
		}
	}
	token, p, err := s.SignIn(ctx, "ADA@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	if p.User.ID != u.ID || p.Session.CSRFToken == "" || len(token) != tokenLen || bytes.Equal(p.Session.Hash, []byte(token)) {
		t.Fatalf("session %+v for token %q", p, token)
	}
	got, err := s.Authenticate(ctx, token)
	if err != nil || got.User.ID != u.ID || got.Session.ID != p.Session.ID {
		t.Fatalf("authenticate: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "short", strings.Repeat("x", tokenLen)} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, ErrNoSession) {
			t.Errorf("authenticate %q: %v", bad, err)
		}
	}
	if err := s.SignOut(ctx, token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a signed-out token authenticates: %v", err)
	}
}

func TestExpiredSession(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	_, u, err := s.CreateUser(ctx, "acme", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	token := secret.Token("", tokenLen)
	err = s.Store.Update(ctx, func(tx store.Tx) error {
		return tx.CreateSession(ctx, &model.Session{OrgID: u.OrgID, UserID: u.ID, Hash: secret.Hash(token), CSRFToken: "c",
			CreatedAt: time.Now().Add(-2 * time.Hour), ExpiresAt: time.Now().Add(-time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("an expired session authenticates: %v", err)
	}
}

func TestChangePassword(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	pw, _, err := s.CreateUser(ctx, "acme", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	first, p, err := s.SignIn(ctx, "ada@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := s.SignIn(ctx, "ada@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	fieldsOf := func(err error) string {
		var bad *invalid.Error
		if !errors.As(err, &bad) {
			return "not a field error: " + err.Error()
		}
		var names []string
		for _, f := range bad.Fields {
			names = append(names, f.Name)
		}
		return strings.Join(names, ",")
	}
	for _, c := range []struct{ current, next, fields string }{
		{"wrong", "a long new password", "currentPassword"},
		{pw, "short", "newPassword"},
		{pw, pw, "newPassword"},
		{pw, strings.Repeat(" ", 20), "newPassword"},
		{"wrong", "short", "newPassword,currentPassword"},
	} {
		if _, _, err := s.ChangePassword(ctx, p, c.current, c.next); fieldsOf(err) != c.fields {
			t.Errorf("change %q to %q: %v, want fields %s", c.current, c.next, err, c.fields)
		}
	}
	token, np, err := s.ChangePassword(ctx, p, pw, "a long new password")
	if err != nil {
		t.Fatal(err)
	}
	if np.User.MustChangePassword {
		t.Fatal("still must change the password")
	}
	for _, old := range []string{first, other} {
		if _, err := s.Authenticate(ctx, old); !errors.Is(err, ErrNoSession) {
			t.Errorf("a session from before the change authenticates: %v", err)
		}
	}
	if _, err := s.Authenticate(ctx, token); err != nil {
		t.Fatalf("the new session: %v", err)
	}
	if _, _, err := s.SignIn(ctx, "ada@example.com", pw); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("the one-time password still signs in: %v", err)
	}
}
