package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// env is a dashboard over a fresh SQLite store, served on loopback.
type env struct {
	t   testing.TB
	svc domain.Services
	st  store.Store
	srv *httptest.Server
}

type envOption func(*Config)

func withLimits(perAddr, perEmail Limit) envOption {
	return func(c *Config) { c.SignInPerAddr, c.SignInPerEmail = perAddr, perEmail }
}

// unlimited is a sign-in limit no test reaches.
var unlimited = Limit{Rate: 1000, Burst: 1000}

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	return newEnvOn(t, sqlitetest.Open(t), opts...)
}

// newEnvOn is newEnv over st.
func newEnvOn(t testing.TB, st store.Store, opts ...envOption) *env {
	t.Helper()
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	c := Config{
		Services: domain.New(st, box, 10), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SignInPerAddr: unlimited, SignInPerEmail: unlimited,
	}
	// The queue is not run: ending a call writes its end, as for a call
	// another server runs.
	c.Queue = callqueue.New(callqueue.Options{Store: st, Node: "test", Logger: c.Logger})
	c.Recordings = &recording.Store{Dir: t.TempDir(), PublicURL: "http://parley.test", Key: box.Derive("recording-links")}
	for _, o := range opts {
		o(&c)
	}
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &env{t: t, svc: c.Services, st: st, srv: srv}
}

// browser is a client with a cookie jar that does not follow redirects,
// so tests see each answer.
type browser struct {
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// page is an answer: status, headers and body.
type page struct {
	status int
	header http.Header
	body   string
}

func (p page) location() string { return p.header.Get("Location") }

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	if m := csrfInput.FindSubmatch(body); m != nil {
		b.csrf = string(m[1])
	}
	return page{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (b *browser) get(path string) page {
	b.e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.e.srv.URL+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form with the browser's CSRF token (unless form sets one),
// from the dashboard's own origin.
func (b *browser) post(path string, form url.Values) page {
	b.e.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok && b.csrf != "" {
		form.Set("csrf", b.csrf)
	}
	req, err := http.NewRequest(http.MethodPost, b.e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.e.srv.URL)
	return b.do(req)
}

// user creates a user in the organization named orgName and returns its
// one-time password.
func (e *env) user(orgName, email string) (string, model.User) {
	e.t.Helper()
	pw, u, err := e.svc.Accounts.CreateUser(context.Background(), orgName, email)
	if err != nil {
		e.t.Fatal(err)
	}
	return pw, u
}

const newPassword = "correct horse battery staple"

// signedIn is a browser signed in as a new user of orgName, past the
// one-time password.
func (e *env) signedIn(orgName, email string) (*browser, model.User) {
	e.t.Helper()
	pw, u := e.user(orgName, email)
	b := e.browser()
	if p := b.post("/signin", url.Values{"email": {email}, "password": {pw}}); p.status != http.StatusSeeOther || p.location() != "/password" {
		e.t.Fatalf("sign in with the one-time password: %d to %q", p.status, p.location())
	}
	b.get("/password")
	p := b.post("/password", url.Values{"currentPassword": {pw}, "newPassword": {newPassword}, "confirmPassword": {newPassword}})
	if p.status != http.StatusSeeOther {
		e.t.Fatalf("set the password: %d\n%s", p.status, p.body)
	}
	b.get("/agents") // picks up the new session's CSRF token
	return b, u
}

func wantStatus(t testing.TB, p page, status int) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d; body:\n%s", p.status, status, p.body)
	}
}

func wantContains(t testing.TB, p page, parts ...string) {
	t.Helper()
	for _, s := range parts {
		if !strings.Contains(p.body, s) {
			t.Fatalf("page lacks %q:\n%s", s, p.body)
		}
	}
}

// sessionCookie is the browser's session token.
func (b *browser) sessionCookie() string {
	u, _ := url.Parse(b.e.srv.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == cookieName {
			return c.Value
		}
	}
	return ""
}

func (b *browser) setSessionCookie(token string) {
	u, _ := url.Parse(b.e.srv.URL)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: token, Path: "/"}})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
