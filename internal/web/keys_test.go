package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/org"
)

var keySecret = regexp.MustCompile(`pk_live_[0-9A-Za-z]{43}`)

func TestKeysCreateShownOnceAndRevoke(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	p := b.post("/keys", url.Values{"name": {"CI"}})
	wantStatus(t, p, http.StatusCreated)
	secret := keySecret.FindString(p.body)
	if secret == "" {
		t.Fatalf("no key in the answer:\n%s", p.body)
	}
	k, err := e.svc.Orgs.Authenticate(ctx, secret)
	if err != nil || k.OrgID != u.OrgID || k.Name != "CI" {
		t.Fatalf("the shown key authenticates as %+v, %v", k, err)
	}
	// Never shown again.
	p = b.get("/keys")
	if keySecret.MatchString(p.body) {
		t.Fatal("the key's secret is shown on a later page")
	}
	wantContains(t, p, k.Prefix+"…", "CI")
	p = b.post("/keys", url.Values{"name": {strings.Repeat("k", org.MaxKeyNameLen+1)}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="key-name-error"`, "must be at most 128 characters")

	wantContains(t, b.get("/keys/"+k.ID+"/revoke"), "Revoke the key "+k.Prefix)
	if p := b.post("/keys/"+k.ID+"/revoke", nil); p.location() != "/keys" {
		t.Fatalf("revoke: %d to %q", p.status, p.location())
	}
	if _, err := e.svc.Orgs.Authenticate(ctx, secret); !errors.Is(err, org.ErrUnauthorized) {
		t.Fatalf("a revoked key authenticates: %v", err)
	}
	wantContains(t, b.get("/keys"), "revoked")
}
