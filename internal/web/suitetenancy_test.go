package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// TestSuiteTenantIsolation: another organization's suite, case and run
// answer 404 on every page and form, also under one's own suite, stay
// untouched, and no list shows them.
func TestSuiteTenantIsolation(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	mine, _ := e.newSuite(u.OrgID, e.newAgentIn(u.OrgID, "Front desk").ID, "Acme bookings")
	_, other := e.user("globex", "gus@globex.example")
	theirAgent := e.newAgentIn(other.OrgID, "Globex agent")
	theirs, theirCase := e.newSuite(other.OrgID, theirAgent.ID, "Globex secret suite")
	theirRun := e.newRun(theirs, theirCase, model.NewID(), model.NewID())

	suite := "/suites/" + theirs.ID
	mineBase := "/suites/" + mine.ID
	form := url.Values{"name": {"Hijacked"}, "agentId": {theirAgent.ID}, "script": {"s"}, "scoringRubric": {"r"},
		"prompt": {"p"}, "mode": {"text"}, "keep": {"0"}}
	for _, c := range []struct{ method, path string }{
		{"GET", suite}, {"POST", suite}, {"GET", suite + "/edit"}, {"GET", suite + "/delete"}, {"POST", suite + "/delete"},
		{"GET", suite + "/cases/new"}, {"POST", suite + "/cases"}, {"POST", suite + "/cases/generated"},
		{"GET", suite + "/cases/" + theirCase.ID}, {"POST", suite + "/cases/" + theirCase.ID},
		{"GET", suite + "/cases/" + theirCase.ID + "/delete"}, {"POST", suite + "/cases/" + theirCase.ID + "/delete"},
		{"POST", suite + "/generate"}, {"POST", suite + "/runs"},
		{"GET", suite + "/runs/" + theirRun.ID}, {"GET", suite + "/runs/" + theirRun.ID + "/live"}, {"POST", suite + "/runs/" + theirRun.ID + "/cancel"},
		// Their case and run under one's own suite.
		{"GET", mineBase + "/cases/" + theirCase.ID}, {"POST", mineBase + "/cases/" + theirCase.ID}, {"POST", mineBase + "/cases/" + theirCase.ID + "/delete"},
		{"GET", mineBase + "/runs/" + theirRun.ID}, {"GET", mineBase + "/runs/" + theirRun.ID + "/live"}, {"POST", mineBase + "/runs/" + theirRun.ID + "/cancel"},
		// Malformed and unknown ids.
		{"GET", "/suites/not-a-uuid"}, {"POST", "/suites/not-a-uuid/delete"}, {"GET", mineBase + "/cases/not-a-uuid"},
		{"GET", mineBase + "/runs/not-a-uuid"}, {"GET", "/suites/" + model.NewID()}, {"POST", "/suites/" + model.NewID() + "/runs"},
	} {
		var p page
		if c.method == "GET" {
			p = b.get(c.path)
		} else {
			p = b.post(c.path, cloneForm(form))
		}
		if p.status != http.StatusNotFound {
			t.Errorf("%s %s: %d, want 404", c.method, c.path, p.status)
		}
	}
	ts, err := e.svc.TestSuites.GetSuite(ctx, other.OrgID, theirs.ID)
	if err != nil || ts.Name != "Globex secret suite" {
		t.Fatalf("their suite after the attempts: %+v, %v", ts, err)
	}
	if cs := e.suiteCases(other.OrgID, theirs.ID); len(cs) != 1 || cs[0].Name != theirCase.Name {
		t.Fatalf("their cases after the attempts: %+v", cs)
	}
	if r, err := e.svc.TestSuites.GetRun(ctx, other.OrgID, theirs.ID, theirRun.ID); err != nil || r.Status != model.TestRunRunning {
		t.Fatalf("their run after the attempts: %+v, %v", r, err)
	}
	if cs := e.suiteCases(u.OrgID, mine.ID); len(cs) != 1 {
		t.Fatalf("%d cases in one's own suite, want 1", len(cs))
	}
	if _, n, _ := e.svc.TestSuites.ListSuites(ctx, u.OrgID, store.TestSuiteFilter{Page: store.Page{Number: 1, Size: 10}}); n != 1 {
		t.Fatalf("%d suites in one's own organization, want 1", n)
	}
	for _, path := range []string{"/suites", "/suites?q=Globex", "/suites?agentId=" + theirAgent.ID, mineBase} {
		body := b.get(path).body
		for _, leak := range []string{"Globex secret", theirs.ID, theirCase.ID, theirRun.ID, "Globex agent"} {
			if contains(body, leak) && !contains(path, leak) {
				t.Errorf("%s shows %q", path, leak)
			}
		}
	}
}
