package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/siptrunk"
)

func TestNumberFormsCreateAssignEditDelete(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	a, err := e.svc.Agents.Create(ctx, u.OrgID, agent.Input{Name: opt.Value("Front desk"), PromptTemplate: opt.Value("p")})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := e.svc.SIPTrunks.Create(ctx, u.OrgID, siptrunk.Input{FriendlyName: opt.Value("Carrier"), Host: opt.Value("sip.example.com")})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, b.get("/numbers/new"), `id="f-e164"`, "Front desk", "Carrier")

	p := b.post("/numbers", url.Values{"e164": {"555-0100"}, "agentId": {a.ID}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="e164-error"`, "must be an E.164 number", `value="555-0100"`)

	p = b.post("/numbers", url.Values{"e164": {"+14155550100"}, "agentId": {a.ID}, "sipTrunkId": {tr.ID}})
	wantStatus(t, p, http.StatusSeeOther)
	id := strings.TrimSuffix(strings.TrimPrefix(p.location(), "/numbers/"), "?saved=1")
	n, err := e.svc.PhoneNumbers.Get(ctx, u.OrgID, id)
	if err != nil || n.AgentID == nil || *n.AgentID != a.ID || n.SIPTrunkID == nil || *n.SIPTrunkID != tr.ID {
		t.Fatalf("created number %+v, %v", n, err)
	}
	wantContains(t, b.get("/numbers"), "&#43;14155550100", "Front desk", "Carrier")

	// A number exists once: the conflict is shown above the form.
	p = b.post("/numbers", url.Values{"e164": {"+14155550100"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "phone number &#43;14155550100 is already registered")

	// Edit: unassign (blank clears).
	p = b.post("/numbers/"+id, url.Values{"e164": {"+14155550101"}})
	wantStatus(t, p, http.StatusSeeOther)
	n, _ = e.svc.PhoneNumbers.Get(ctx, u.OrgID, id)
	if n.E164 != "+14155550101" || n.AgentID != nil || n.SIPTrunkID != nil {
		t.Fatalf("edited number %+v", n)
	}
	wantContains(t, b.get("/numbers"), "unassigned")

	wantContains(t, b.get("/numbers/"+id+"/delete"), "Delete the phone number &#43;14155550101")
	if p := b.post("/numbers/"+id+"/delete", nil); p.location() != "/numbers" {
		t.Fatalf("delete: %d to %q", p.status, p.location())
	}
	wantContains(t, b.get("/numbers"), "No phone numbers yet.")
}
