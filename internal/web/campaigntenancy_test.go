package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/suppression"
)

// TestCampaignTenantIsolation: another organization's campaign and
// do-not-call entry answer 404 on every page and action, also with a file
// attached, stay untouched, and no list or choice shows them; a campaign
// naming their agent is refused.
func TestCampaignTenantIsolation(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	_, other := e.user("globex", "gus@globex.example")
	theirAgent := e.newAgentIn(other.OrgID, "Globex secret agent")
	theirs := e.newCampaign(other.OrgID, theirAgent.ID, "Globex secret campaign", "+19990000001")
	entry, _, err := e.svc.Suppressions.Create(ctx, other.OrgID, suppression.Input{Number: opt.Value("+19990000002"), Reason: opt.Value("Globex secret reason")})
	if err != nil {
		t.Fatal(err)
	}
	e.newCampaign(u.OrgID, e.newAgentIn(u.OrgID, "Acme desk").ID, "Acme renewals")

	base := "/campaigns/" + theirs.ID
	for _, c := range []struct{ method, path string }{
		{"GET", base}, {"GET", base + "/progress"}, {"GET", base + "?status=pending"},
		{"GET", base + "/edit"}, {"FORM", base},
		{"POST", base + "/start"}, {"POST", base + "/pause"}, {"POST", base + "/resume"},
		{"GET", base + "/cancel"}, {"POST", base + "/cancel"}, {"GET", base + "/delete"}, {"POST", base + "/delete"},
		{"FILE", base + "/recipients"},
		{"GET", "/suppressions/" + entry.ID + "/delete"}, {"POST", "/suppressions/" + entry.ID + "/delete"},
		{"GET", "/campaigns/not-a-uuid"}, {"POST", "/campaigns/not-a-uuid/start"}, {"FILE", "/campaigns/not-a-uuid/recipients"},
		{"GET", "/campaigns/" + model.NewID()}, {"POST", "/campaigns/" + model.NewID() + "/cancel"},
		{"GET", "/suppressions/not-a-uuid/delete"}, {"POST", "/suppressions/" + model.NewID() + "/delete"},
	} {
		var p page
		switch c.method {
		case "GET":
			p = b.get(c.path)
		case "POST":
			p = b.post(c.path, nil)
		case "FORM":
			p = b.post(c.path, campaignForm(theirAgent.ID))
		case "FILE":
			p = b.postFile(c.path, nil, "recipients", "more.csv", "toNumber\n+19990000003\n")
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, p.status)
		}
		for _, leak := range []string{"Globex", "19990000001"} {
			if contains(p.body, leak) {
				t.Errorf("%s %s shows %q", c.method, c.path, leak)
			}
		}
	}
	got, err := e.svc.Campaigns.Get(ctx, other.OrgID, theirs.ID)
	if err != nil || got.Status != model.CampaignDraft || got.Counts.Total != 1 || got.Name != "Globex secret campaign" {
		t.Fatalf("their campaign after the attempts: %+v, %v", got, err)
	}
	if _, err := e.svc.Suppressions.Get(ctx, other.OrgID, entry.ID); err != nil {
		t.Fatalf("their entry after the attempts: %v", err)
	}

	// Their agent is no choice, and naming it is refused.
	p := b.postFile("/campaigns", campaignForm(theirAgent.ID), "", "", "")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="agentId-error"`)
	for _, path := range []string{"/campaigns", "/campaigns?agentId=" + theirAgent.ID, "/campaigns/new", "/suppressions", "/suppressions?q=999",
		"/calls?campaignId=" + theirs.ID} {
		body := withoutSearchForm(b.get(path).body)
		for _, leak := range []string{"Globex", theirs.ID, theirAgent.ID, "19990000002"} {
			if contains(body, leak) {
				t.Errorf("%s shows %q", path, leak)
			}
		}
	}
	// Their number is not on our list: adding it here is ours alone.
	if p := b.post("/suppressions", url.Values{"number": {"+19990000002"}}); p.location() != "/suppressions?added=1" {
		t.Fatalf("adding their number to our list: %d to %q", p.status, p.location())
	}
}
