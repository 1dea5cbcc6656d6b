package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestConnectionFormsCreateEditDelete(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	wantContains(t, b.get("/connections"), "No messaging connections yet.")
	wantContains(t, b.get("/connections/new"), `id="f-accountSid"`, `maxlength="64"`, `id="f-authToken"`, `type="password"`)

	// The service's rules beside their fields; the token is never echoed.
	p := b.post("/connections", url.Values{"provider": {"twilio"}, "accountSid": {"AC1"}, "authToken": {"tok-secret-1"},
		"fromNumber": {"555"}, "baseUrl": {"ftp://x"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="fromNumber-error"`, "must be an E.164 number", `id="baseUrl-error"`, `value="AC1"`)
	if strings.Contains(p.body, "tok-secret-1") {
		t.Fatal("a refused form shows the auth token back")
	}
	p = b.post("/connections", url.Values{"provider": {"twilio"}, "accountSid": {"AC1"}, "fromNumber": {"+14155550100"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="authToken-error"`, "is required")
	if _, total, _ := e.svc.MessagingConnections.List(ctx, u.OrgID, adminPageOne); total != 0 {
		t.Fatalf("refused forms stored %d connections", total)
	}

	p = b.post("/connections", url.Values{"name": {"Main line"}, "provider": {"twilio"}, "accountSid": {"AC1"}, "authToken": {"tok-secret-1"},
		"fromNumber": {"+14155550100"}})
	wantStatus(t, p, http.StatusSeeOther)
	id := strings.TrimSuffix(strings.TrimPrefix(p.location(), "/connections/"), "?saved=1")
	c, err := e.svc.MessagingConnections.Get(ctx, u.OrgID, id)
	if err != nil || *c.Name != "Main line" || c.BaseURL != "https://api.twilio.com" || len(c.AuthToken) == 0 {
		t.Fatalf("created %+v, %v", c, err)
	}
	p = b.get(p.location())
	wantContains(t, p, "Saved.", "An auth token is set.", `value="AC1"`, `value="&#43;14155550100"`)
	if strings.Contains(p.body, "tok-secret-1") {
		t.Fatal("the edit form shows the auth token")
	}
	p = b.get("/connections")
	wantContains(t, p, "Main line", "AC1", "&#43;14155550100", ">set<")
	if strings.Contains(p.body, "tok-secret-1") {
		t.Fatal("the list shows the auth token")
	}

	// Edit: a blank token keeps it; clearing both senders is refused and changes nothing.
	p = b.post("/connections/"+id, url.Values{"name": {"Main line"}, "provider": {"twilio"}, "accountSid": {"AC1"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="fromNumber-error"`, "or messagingServiceSid is required")
	p = b.post("/connections/"+id, url.Values{"name": {""}, "provider": {"twilio"}, "accountSid": {"AC2"}, "baseUrl": {"https://sms.example.com"},
		"messagingServiceSid": {"MG1"}})
	wantStatus(t, p, http.StatusSeeOther)
	got, _ := e.svc.MessagingConnections.Get(ctx, u.OrgID, id)
	if got.Name != nil || got.AccountSID != "AC2" || got.BaseURL != "https://sms.example.com" || got.FromNumber != nil ||
		*got.MessagingServiceSID != "MG1" || string(got.AuthToken) != string(c.AuthToken) {
		t.Fatalf("edited %+v", got)
	}
	wantContains(t, b.get("/connections"), "service MG1")

	wantContains(t, b.get("/connections/"+id+"/delete"), "Delete the messaging connection “twilio AC2”")
	if p := b.post("/connections/"+id+"/delete", nil); p.location() != "/connections" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	wantContains(t, b.get("/connections"), "No messaging connections yet.")
}
