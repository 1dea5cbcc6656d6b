package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/parley-voice/parley/internal/account"
	"github.com/parley-voice/parley/internal/store"
)

var oneTimePassword = regexp.MustCompile(`id="one-time-password" type="text" readonly value="([^"]+)"`)

func issued(t *testing.T, p page) string {
	t.Helper()
	m := oneTimePassword.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no one-time password shown:\n%s", p.body)
	}
	return m[1]
}

func TestUsersAddResetRemove(t *testing.T) {
	e := newEnv(t)
	b, me := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	p := b.get("/users")
	wantContains(t, p, "ada@example.com", "(you)", `href="/password"`)
	if contains(p.body, "/users/"+me.ID+"/") {
		t.Fatal("the list offers to reset or remove yourself")
	}

	// Bad and taken emails are refused beside the input; nothing is stored.
	p = b.post("/users", url.Values{"email": {"not an email"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="email-error"`, "must be an email address", `value="not an email"`)
	e.user("globex", "gus@globex.example")
	p = b.post("/users", url.Values{"email": {"GUS@globex.example"}})
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "a user with this email exists")
	if _, total, _ := e.svc.Accounts.Users(ctx, me.OrgID, adminPageOne); total != 1 {
		t.Fatalf("refused adds left %d users", total)
	}

	// Added: the one-time password is shown once and signs in.
	p = b.post("/users", url.Values{"email": {"Bob@Example.com"}})
	wantStatus(t, p, http.StatusCreated)
	pw := issued(t, p)
	wantContains(t, p, "bob@example.com can sign in now", "one-time")
	if contains(b.get("/users").body, pw) {
		t.Fatal("the one-time password is shown again")
	}
	bob := e.browser()
	if p := bob.post("/signin", url.Values{"email": {"bob@example.com"}, "password": {pw}}); p.location() != "/password" {
		t.Fatalf("sign in with the one-time password: %d to %q", p.status, p.location())
	}
	users, _, _ := e.svc.Accounts.Users(ctx, me.OrgID, adminPageOne)
	bobID := users[1].ID
	wantStatus(t, bob.get("/password"), http.StatusOK)

	// Reset: a new one-time password; Bob's session ends.
	wantContains(t, b.get("/users/"+bobID+"/reset"), "Give bob@example.com a new one-time password?")
	p = b.post("/users/"+bobID+"/reset", nil)
	wantStatus(t, p, http.StatusOK)
	next := issued(t, p)
	if next == pw {
		t.Fatal("the reset kept the password")
	}
	if p := bob.get("/password"); p.status != http.StatusSeeOther || p.location() != "/signin" {
		t.Fatalf("Bob's session after the reset: %d to %q", p.status, p.location())
	}
	if _, _, err := e.svc.Accounts.SignIn(ctx, "bob@example.com", pw); !errors.Is(err, account.ErrBadCredentials) {
		t.Fatalf("the old password after the reset: %v", err)
	}
	bob = e.browser()
	if p := bob.post("/signin", url.Values{"email": {"bob@example.com"}, "password": {next}}); p.location() != "/password" {
		t.Fatalf("sign in with the new one-time password: %d to %q", p.status, p.location())
	}

	// Yourself: refused, and nothing changes.
	for _, c := range []struct{ method, path string }{
		{"GET", "/users/" + me.ID + "/reset"}, {"POST", "/users/" + me.ID + "/reset"},
		{"GET", "/users/" + me.ID + "/delete"}, {"POST", "/users/" + me.ID + "/delete"},
	} {
		var p page
		if c.method == "GET" {
			p = b.get(c.path)
		} else {
			p = b.post(c.path, nil)
		}
		wantStatus(t, p, http.StatusConflict)
	}
	wantStatus(t, b.get("/agents"), http.StatusOK) // still signed in

	// Remove: Bob is signed out and cannot sign in.
	wantContains(t, b.get("/users/"+bobID+"/delete"), "Remove bob@example.com from this organization?")
	if p := b.post("/users/"+bobID+"/delete", nil); p.status != http.StatusSeeOther || p.location() != "/users" {
		t.Fatalf("remove: %d to %q", p.status, p.location())
	}
	if p := bob.get("/password"); p.status != http.StatusSeeOther || p.location() != "/signin" {
		t.Fatalf("Bob's session after removal: %d to %q", p.status, p.location())
	}
	if _, err := e.svc.Accounts.Get(ctx, me.OrgID, bobID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("removed user: %v", err)
	}
	if contains(b.get("/users").body, "bob@example.com") {
		t.Fatal("the list shows a removed user")
	}
	wantStatus(t, b.post("/users/"+bobID+"/delete", nil), http.StatusNotFound)
}
