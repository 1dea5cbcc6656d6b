package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSignInPasswordChangeAndSignOut(t *testing.T) {
	e := newEnv(t)
	pw, _ := e.user("acme", "Ada@Example.com")
	b := e.browser()
	if p := b.get("/agents"); p.status != http.StatusSeeOther || p.location() != "/signin" {
		t.Fatalf("signed out: %d to %q, want the sign-in page", p.status, p.location())
	}
	p := b.post("/signin", url.Values{"email": {"ada@example.com"}, "password": {"wrong password"}})
	wantStatus(t, p, http.StatusUnauthorized)
	wantContains(t, p, "The email or the password is wrong.")
	p = b.post("/signin", url.Values{"email": {"nobody@example.com"}, "password": {pw}})
	wantStatus(t, p, http.StatusUnauthorized)

	// The one-time password signs in (email case does not matter), but
	// every page leads to choosing a password.
	p = b.post("/signin", url.Values{"email": {" ADA@example.com"}, "password": {pw}})
	if p.status != http.StatusSeeOther || p.location() != "/password" {
		t.Fatalf("sign in: %d to %q", p.status, p.location())
	}
	cookie := p.header.Get("Set-Cookie")
	for _, attr := range []string{"parley_session=", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(cookie, attr) {
			t.Fatalf("session cookie %q lacks %s", cookie, attr)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Fatalf("cookie over plain HTTP without an https public URL is Secure: %q", cookie)
	}
	if p := b.get("/keys"); p.location() != "/password" {
		t.Fatalf("before the password change /keys goes to %q, want /password", p.location())
	}
	wantContains(t, b.get("/password"), "one-time password")
	oneTime := b.sessionCookie()

	wantStatus(t, b.post("/password", url.Values{"currentPassword": {pw}, "newPassword": {newPassword}, "confirmPassword": {"something else"}}), http.StatusBadRequest)
	p = b.post("/password", url.Values{"currentPassword": {pw}, "newPassword": {"short"}, "confirmPassword": {"short"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="newPassword-error"`, "must be 12 to 256 characters")
	p = b.post("/password", url.Values{"currentPassword": {"not it at all"}, "newPassword": {newPassword}, "confirmPassword": {newPassword}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "is not your current password")
	p = b.post("/password", url.Values{"currentPassword": {pw}, "newPassword": {newPassword}, "confirmPassword": {newPassword}})
	if p.status != http.StatusSeeOther || p.location() != "/" {
		t.Fatalf("set the password: %d to %q", p.status, p.location())
	}
	wantStatus(t, b.get("/agents"), http.StatusOK)

	// Changing the password ended the one-time session.
	stale := e.browser()
	stale.setSessionCookie(oneTime)
	if p := stale.get("/agents"); p.location() != "/signin" {
		t.Fatalf("the session from before the password change still works: %d to %q", p.status, p.location())
	}
	// The one-time password no longer signs in; the new one does.
	wantStatus(t, e.browser().post("/signin", url.Values{"email": {"ada@example.com"}, "password": {pw}}), http.StatusUnauthorized)
	if p := e.browser().post("/signin", url.Values{"email": {"ada@example.com"}, "password": {newPassword}}); p.location() != "/" {
		t.Fatalf("sign in with the new password: %d to %q", p.status, p.location())
	}

	// Signing out deletes the session: its cookie is worth nothing after.
	token := b.sessionCookie()
	if p := b.post("/signout", nil); p.location() != "/signin" {
		t.Fatalf("sign out: %d to %q", p.status, p.location())
	}
	replay := e.browser()
	replay.setSessionCookie(token)
	if p := replay.get("/agents"); p.location() != "/signin" {
		t.Fatalf("a signed-out session still works: %d to %q", p.status, p.location())
	}
}

func TestSecureCookieWithHTTPSPublicURL(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.PublicURL = "https://parley.example.com" })
	pw, _ := e.user("acme", "ada@example.com")
	b := e.browser()
	p := b.post("/signin", url.Values{"email": {"ada@example.com"}, "password": {pw}})
	cookie := p.header.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "__Host-parley_session=") || !strings.Contains(cookie, "Secure") {
		t.Fatalf("cookie behind an https public URL = %q, want a Secure __Host- cookie", cookie)
	}
}

func TestCSRF(t *testing.T) {
	e := newEnv(t)
	b, _ := e.signedIn("acme", "ada@example.com")
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "name": {"Support"}, "promptTemplate": {"Help."}, "status": {"active"}, "mode": {"single_prompt"}}
	}
	for name, f := range map[string]url.Values{
		"no token":    {"name": {"Support"}, "promptTemplate": {"Help."}},
		"wrong token": form("forged"),
		"empty token": form(""),
	} {
		t.Run(name, func(t *testing.T) {
			if name == "no token" {
				saved := b.csrf
				b.csrf = ""
				defer func() { b.csrf = saved }()
			}
			p := b.post("/agents", f)
			wantStatus(t, p, http.StatusForbidden)
		})
	}
	// Every unsafe route checks it: sign out and revoke too.
	wantStatus(t, b.post("/signout", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	wantStatus(t, b.post("/keys", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	wantStatus(t, b.post("/password", url.Values{"csrf": {"forged"}}), http.StatusForbidden)
	// The htmx header carries it as well.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/agents", strings.NewReader(url.Values{"name": {"Hx"}, "promptTemplate": {"Hi."}, "status": {"active"}, "mode": {"single_prompt"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(csrfHeader, b.csrf)
	if p := b.do(req); p.status != http.StatusSeeOther {
		t.Fatalf("create with the X-CSRF-Token header: %d\n%s", p.status, p.body)
	}
	// A form posted from another site is refused even with the token (a
	// browser says where it comes from).
	req, _ = http.NewRequest(http.MethodPost, e.srv.URL+"/agents", strings.NewReader(form(b.csrf).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	wantStatus(t, b.do(req), http.StatusForbidden)
	// So is a cross-site sign-in (login CSRF), which has no session yet.
	pw, _ := e.user("acme", "bob@example.com")
	req, _ = http.NewRequest(http.MethodPost, e.srv.URL+"/signin", strings.NewReader(url.Values{"email": {"bob@example.com"}, "password": {pw}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	wantStatus(t, e.browser().do(req), http.StatusForbidden)
}

func TestSignInRateLimit(t *testing.T) {
	never := 1e-9 // tokens come back slower than any test runs
	t.Run("per address", func(t *testing.T) {
		e := newEnv(t, withLimits(Limit{Rate: never, Burst: 3}, unlimited))
		b := e.browser()
		for i := range 3 {
			wantStatus(t, b.post("/signin", url.Values{"email": {"u" + string(rune('a'+i)) + "@example.com"}, "password": {"x"}}), http.StatusUnauthorized)
		}
		p := b.post("/signin", url.Values{"email": {"other@example.com"}, "password": {"x"}})
		wantStatus(t, p, http.StatusTooManyRequests)
		wantContains(t, p, "Too many sign-in attempts")
		if p.header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	})
	t.Run("per email", func(t *testing.T) {
		e := newEnv(t, withLimits(unlimited, Limit{Rate: never, Burst: 2}))
		pw, _ := e.user("acme", "ada@example.com")
		b := e.browser()
		for range 2 {
			wantStatus(t, b.post("/signin", url.Values{"email": {"ada@example.com"}, "password": {"guess"}}), http.StatusUnauthorized)
		}
		// The right password does not get through a spent bucket, in any case.
		wantStatus(t, b.post("/signin", url.Values{"email": {"ADA@example.com"}, "password": {pw}}), http.StatusTooManyRequests)
		// Another email is not held back.
		wantStatus(t, b.post("/signin", url.Values{"email": {"bob@example.com"}, "password": {"guess"}}), http.StatusUnauthorized)
	})
}

func TestPagesAndHeaders(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	p := b.get("/signin")
	wantStatus(t, p, http.StatusOK)
	if csp := p.header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Fatalf("CSP = %q", csp)
	}
	wantContains(t, p, `<label for="email">`, `<main id="main"`)
	p = b.get("/static/vendor/htmx/htmx.min.js")
	wantStatus(t, p, http.StatusOK)
	if ct := p.header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Fatalf("htmx served as %q", ct)
	}
	wantStatus(t, b.get("/no/such/page"), http.StatusNotFound)
	wantStatus(t, b.get("/static/nothing.css"), http.StatusNotFound)
	p = b.post("/agents/new", url.Values{})
	if p.status != http.StatusMethodNotAllowed && p.status != http.StatusForbidden {
		t.Fatalf("POST /agents/new: %d", p.status)
	}
}
