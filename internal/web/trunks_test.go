package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func TestTrunkFormsCreateEditRegisterDelete(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	wantContains(t, b.get("/trunks/new"), `id="f-friendlyName"`, "At most 128 characters", `id="f-registration.expiresSeconds"`, `min="60"`, `max="86400"`)

	// The service's rules, beside their fields; passwords are not echoed.
	p := b.post("/trunks", url.Values{"friendlyName": {"Carrier"}, "transport": {"udp"}, "port": {"70000"},
		"password": {"hunter2-secret"}, "inboundAllowedCidrs": {"203.0.113.0/24\nnot-a-net"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="host-error"`, "is required unless transport is loopback", `id="port-error"`, "must be between 1 and 65535",
		`id="inboundAllowedCidrs-error"`, "inboundAllowedCidrs[1]: must be an IP address or CIDR")
	if strings.Contains(p.body, "hunter2-secret") {
		t.Fatal("a refused form shows the password back")
	}
	p = b.post("/trunks", url.Values{"friendlyName": {"Carrier"}, "transport": {"udp"}, "host": {"sip.example.com"},
		"register": {"on"}, "registration.enabled": {"on"}, "registration.expiresSeconds": {"10"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="registration.expiresSeconds-error"`, "must be between 60 and 86400", `id="registration.username-error"`)

	p = b.post("/trunks", url.Values{"friendlyName": {"Carrier"}, "transport": {"udp"}, "host": {"sip.example.com"}, "port": {"5060"},
		"username": {"acme"}, "password": {"hunter2-secret"}, "register": {"on"}, "registration.enabled": {"on"}})
	wantStatus(t, p, http.StatusSeeOther)
	id := strings.TrimSuffix(strings.TrimPrefix(p.location(), "/trunks/"), "?saved=1")
	tr, err := e.svc.SIPTrunks.Get(ctx, u.OrgID, id)
	if err != nil || tr.Registration == nil || !tr.Registration.Enabled || tr.Registration.ContactUser != "acme" || len(tr.Password) == 0 {
		t.Fatalf("created trunk %+v, %v", tr, err)
	}
	p = b.get(p.location())
	wantContains(t, p, "Saved.", "A password is stored.", `value="sip.example.com"`, "unregistered")
	if strings.Contains(p.body, "hunter2-secret") {
		t.Fatal("the edit form shows the password")
	}

	// Live state as the registering server wrote it.
	exp, lastErr := time.Now().Add(time.Hour), "401 Unauthorized"
	err = e.svc.SIPTrunks.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.ClaimSIPRegistration(ctx, u.OrgID, tr.ID, "test-server", time.Now(), exp, true); err != nil {
			return err
		}
		return tx.SetSIPRegistrationStatus(ctx, u.OrgID, tr.ID, "test-server", model.RegistrationStatus{State: model.RegistrationRegistered, ExpiresAt: &exp, LastError: &lastErr})
	})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, b.get("/trunks/"+id), `<span class="badge active">registered</span>`, "Expires", "401 Unauthorized")
	wantContains(t, b.get("/trunks"), "Carrier", "registered")

	// Edit: a blank password keeps it; unchecking "enabled" disables.
	p = b.post("/trunks/"+id, url.Values{"friendlyName": {"Carrier 2"}, "transport": {"udp"}, "host": {"sip.example.com"},
		"username": {"acme"}, "register": {"on"}, "registration.expiresSeconds": {"600"}})
	wantStatus(t, p, http.StatusSeeOther)
	tr, _ = e.svc.SIPTrunks.Get(ctx, u.OrgID, id)
	if tr.FriendlyName != "Carrier 2" || len(tr.Password) == 0 || tr.Registration.Enabled || tr.Registration.ExpiresSeconds != 600 || tr.Port != nil {
		t.Fatalf("edited trunk %+v reg %+v", tr, tr.Registration)
	}
	wantContains(t, b.get("/trunks/"+id), "unregistered")
	// Unchecking "register" removes the registration; the stored password can be removed.
	p = b.post("/trunks/"+id, url.Values{"friendlyName": {"Carrier 2"}, "transport": {"udp"}, "host": {"sip.example.com"}, "clearPassword": {"on"}})
	wantStatus(t, p, http.StatusSeeOther)
	tr, _ = e.svc.SIPTrunks.Get(ctx, u.OrgID, id)
	if tr.Registration != nil || len(tr.Password) != 0 {
		t.Fatalf("after removing: %+v", tr)
	}

	wantContains(t, b.get("/trunks/"+id), `name="registration.enabled" checked`) // one added now starts enabled
	wantContains(t, b.get("/trunks/"+id+"/delete"), "Delete the SIP trunk “Carrier 2”")
	if p := b.post("/trunks/"+id+"/delete", nil); p.location() != "/trunks" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	wantContains(t, b.get("/trunks"), "No trunks yet.")
}

// A trunk's calls per second: set, shown back, refused out of range or not
// a number, and cleared (the server's default) by a blank input.
func TestTrunkFormCallsPerSecond(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	base := url.Values{"friendlyName": {"Carrier"}, "transport": {"udp"}, "host": {"sip.example.com"}}
	with := func(cps string) url.Values {
		v := url.Values{}
		for k, x := range base {
			v[k] = x
		}
		v.Set("callsPerSecond", cps)
		return v
	}
	for _, bad := range []string{"-1", "10001", "fast"} {
		p := b.post("/trunks", with(bad))
		wantStatus(t, p, http.StatusBadRequest)
		wantContains(t, p, `id="callsPerSecond-error"`)
	}
	p := b.post("/trunks", with("2.5"))
	wantStatus(t, p, http.StatusSeeOther)
	id := strings.TrimSuffix(strings.TrimPrefix(p.location(), "/trunks/"), "?saved=1")
	tr, err := e.svc.SIPTrunks.Get(ctx, u.OrgID, id)
	if err != nil || tr.CallsPerSecond == nil || *tr.CallsPerSecond != 2.5 {
		t.Fatalf("created trunk %+v, %v", tr.CallsPerSecond, err)
	}
	wantContains(t, b.get("/trunks/"+id), `name="callsPerSecond"`, `value="2.5"`)
	wantStatus(t, b.post("/trunks/"+id, with("")), http.StatusSeeOther)
	if tr, _ = e.svc.SIPTrunks.Get(ctx, u.OrgID, id); tr.CallsPerSecond != nil {
		t.Fatalf("a blank input kept %v", *tr.CallsPerSecond)
	}
}
