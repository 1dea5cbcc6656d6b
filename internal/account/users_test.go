package account

import (
	"context"
	"errors"
	"testing"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/store"
)

func TestAddResetRemoveUsers(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	_, ada, err := s.CreateUser(ctx, "acme", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	_, gus, err := s.CreateUser(ctx, "globex", "gus@example.com")
	if err != nil {
		t.Fatal(err)
	}
	pw, bob, err := s.AddUser(ctx, ada.OrgID, " Bob@Example.com")
	if err != nil || bob.OrgID != ada.OrgID || bob.Email != "bob@example.com" || !bob.MustChangePassword || len(pw) != oneTimePasswordN {
		t.Fatalf("add: %+v %q %v", bob, pw, err)
	}
	var conflict *invalid.Conflict
	if _, _, err := s.AddUser(ctx, ada.OrgID, "GUS@example.com"); !errors.As(err, &conflict) {
		t.Fatalf("an email in use: %v, want a conflict", err)
	}
	var bad *invalid.Error
	if _, _, err := s.AddUser(ctx, ada.OrgID, "not an email"); !errors.As(err, &bad) || bad.Fields[0].Name != "email" {
		t.Fatalf("a bad email: %v", err)
	}
	users, total, err := s.Users(ctx, ada.OrgID, store.Page{Number: 1, Size: 10, SortDir: store.Asc})
	if err != nil || total != 2 || users[0].ID != ada.ID || users[1].ID != bob.ID {
		t.Fatalf("users: %+v %d %v", users, total, err)
	}

	// Resetting ends Bob's sessions; the old password stops working.
	token, _, err := s.SignIn(ctx, "bob@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResetPassword(ctx, ada.OrgID, ada.ID, ada.ID); !errors.As(err, &conflict) {
		t.Fatalf("resetting your own password: %v, want a conflict", err)
	}
	if _, _, err := s.ResetPassword(ctx, ada.OrgID, ada.ID, gus.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("resetting another organization's user: %v, want not found", err)
	}
	next, u, err := s.ResetPassword(ctx, ada.OrgID, ada.ID, bob.ID)
	if err != nil || next == pw || len(next) != oneTimePasswordN || !u.MustChangePassword {
		t.Fatalf("reset: %q %+v %v", next, u, err)
	}
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a session from before the reset: %v", err)
	}
	if _, _, err := s.SignIn(ctx, "bob@example.com", pw); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("the old password: %v", err)
	}
	if token, _, err = s.SignIn(ctx, "bob@example.com", next); err != nil {
		t.Fatal(err)
	}

	// Removing: not yourself, not another organization's user; it ends the sessions.
	if err := s.RemoveUser(ctx, ada.OrgID, ada.ID, ada.ID); !errors.As(err, &conflict) {
		t.Fatalf("removing yourself: %v, want a conflict", err)
	}
	if err := s.RemoveUser(ctx, ada.OrgID, ada.ID, gus.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("removing another organization's user: %v, want not found", err)
	}
	if _, err := s.Get(ctx, gus.OrgID, gus.ID); err != nil {
		t.Fatalf("their user after the attempt: %v", err)
	}
	if err := s.RemoveUser(ctx, ada.OrgID, ada.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a removed user's session: %v", err)
	}
	if _, err := s.Get(ctx, ada.OrgID, bob.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a removed user: %v", err)
	}
}

// The operator's reset finds the user by email in any organization and
// ends their sessions; an unknown email is not found and changes nothing.
func TestResetPasswordByEmail(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	pw, gus, err := s.CreateUser(ctx, "globex", "gus@example.com")
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := s.SignIn(ctx, "gus@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResetPasswordByEmail(ctx, "nobody@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown email: %v, want not found", err)
	}
	if _, err := s.Authenticate(ctx, token); err != nil {
		t.Fatalf("a failed reset ended a session: %v", err)
	}
	next, u, err := s.ResetPasswordByEmail(ctx, " GUS@example.com ")
	if err != nil || u.ID != gus.ID || !u.MustChangePassword || next == pw || len(next) != oneTimePasswordN {
		t.Fatalf("reset: %q %+v %v", next, u, err)
	}
	if _, err := s.Authenticate(ctx, token); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a session from before the reset: %v", err)
	}
	if _, _, err := s.SignIn(ctx, "gus@example.com", pw); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("the old password: %v", err)
	}
	if _, _, err := s.SignIn(ctx, "gus@example.com", next); err != nil {
		t.Fatalf("the new password: %v", err)
	}
}
