package app

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/account"
)

func TestUsersCreatePrintsOnlyTheOneTimePassword(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"users", "create", "--org", "acme", "--email", "Ada@Example.com", "--data-dir", dir}, &out, &errOut, env(nil))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !regexp.MustCompile(`^[0-9A-Za-z]{24}\n$`).MatchString(out.String()) {
		t.Fatalf("stdout = %q, want the password alone on one line", out.String())
	}
	// The password signs the user in to the organization, which was created.
	a, err := Open(context.Background(), Config{DataDir: dir, MaxConcurrentCalls: 10, Dialer: "none"}, newLogger(Config{}, &errOut))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, p, err := a.Accounts.SignIn(context.Background(), "ada@example.com", strings.TrimSpace(out.String()))
	if err != nil || !p.User.MustChangePassword {
		t.Fatalf("sign in with the printed password: %+v, %v", p.User, err)
	}
	o, err := a.Orgs.Get(context.Background(), p.User.OrgID)
	if err != nil || o.Name != "acme" {
		t.Fatalf("the user's organization: %+v, %v", o, err)
	}

	// The same email again is refused, and so are a bad email and missing flags.
	for _, args := range [][]string{
		{"users", "create", "--org", "other", "--email", "ada@example.com", "--data-dir", dir},
		{"users", "create", "--org", "acme", "--email", "not an email", "--data-dir", dir},
	} {
		var out bytes.Buffer
		if code := Main(context.Background(), args, &out, &errOut, env(nil)); code != 1 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
	for _, args := range [][]string{{"users"}, {"users", "create", "--org", "acme"}, {"users", "delete"}} {
		if code := Main(context.Background(), args, &out, &errOut, env(nil)); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestBootstrapCreatesTheDashboardLoginOnce(t *testing.T) {
	var errOut bytes.Buffer
	a, err := Open(context.Background(), Config{DataDir: t.TempDir(), MaxConcurrentCalls: 10, Dialer: "none"}, newLogger(Config{}, &errOut))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := context.Background()
	key, login, err := a.Accounts.Bootstrap(ctx)
	if err != nil || key == "" || login.Email != account.BootstrapEmail || login.Password == "" {
		t.Fatalf("first bootstrap: %q %+v %v", key, login, err)
	}
	if _, _, err := a.Accounts.SignIn(ctx, login.Email, login.Password); err != nil {
		t.Fatalf("the printed login does not sign in: %v", err)
	}
	key, login, err = a.Accounts.Bootstrap(ctx)
	if err != nil || key != "" || login != (account.Login{}) {
		t.Fatalf("second bootstrap created %q %+v (%v)", key, login, err)
	}
}

// A lost password: reset-password prints a new one-time password alone,
// which signs in (and must be replaced); the old one and the user's
// sessions stop working. An unknown email changes nothing and fails.
func TestUsersResetPassword(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var created, errOut bytes.Buffer
	if code := Main(ctx, []string{"users", "create", "--org", "acme", "--email", "ada@example.com", "--data-dir", dir}, &created, &errOut, env(nil)); code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut.String())
	}
	first := strings.TrimSpace(created.String())
	open := func() *App {
		a, err := Open(ctx, Config{DataDir: dir, MaxConcurrentCalls: 10, Dialer: "none"}, newLogger(Config{}, &errOut))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := open()
	token, _, err := a.Accounts.SignIn(ctx, "ada@example.com", first)
	a.Close()
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if code := Main(ctx, []string{"users", "reset-password", "--email", " ADA@example.com"}, &out, &errOut, env(map[string]string{"PARLEY_DATA_DIR": dir})); code != 0 {
		t.Fatalf("reset-password: exit %d: %s", code, errOut.String())
	}
	if !regexp.MustCompile(`^[0-9A-Za-z]{24}\n$`).MatchString(out.String()) || strings.TrimSpace(out.String()) == first {
		t.Fatalf("stdout = %q, want a new password alone on one line", out.String())
	}
	a = open()
	defer a.Close()
	if _, _, err := a.Accounts.SignIn(ctx, "ada@example.com", first); !errors.Is(err, account.ErrBadCredentials) {
		t.Errorf("the old password: %v, want refused", err)
	}
	if _, err := a.Accounts.Authenticate(ctx, token); !errors.Is(err, account.ErrNoSession) {
		t.Errorf("a session from before the reset: %v, want ended", err)
	}
	_, p, err := a.Accounts.SignIn(ctx, "ada@example.com", strings.TrimSpace(out.String()))
	if err != nil || !p.User.MustChangePassword {
		t.Fatalf("the new password: %+v, %v; want a sign-in that must choose a password", p.User, err)
	}

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"users", "reset-password", "--email", "bob@example.com", "--data-dir", dir}, 1, `no user signs in with "bob@example.com"`},
		{[]string{"users", "reset-password", "--data-dir", dir}, 2, "Usage: parley users"},
		{[]string{"users", "reset-password", "--email", "ada@example.com", "--data-dir", dir, "extra"}, 2, "unexpected arguments"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(ctx, tc.args, &out, &errOut, env(nil)); code != tc.code || out.Len() != 0 || !strings.Contains(errOut.String(), tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.err)
		}
	}
	// Still the password reset printed: nothing above changed it.
	if _, _, err := a.Accounts.SignIn(ctx, "ada@example.com", strings.TrimSpace(out.String())); err != nil {
		t.Errorf("after the failed attempts: %v", err)
	}
}
