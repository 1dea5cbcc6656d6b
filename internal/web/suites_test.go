package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm/llmtest"
	"github.com/parley-voice/parley/internal/provider/llm/openai"
	"github.com/parley-voice/parley/internal/store"
)

// newSuite stores a suite of agentID in orgID with one case.
func (e *env) newSuite(orgID, agentID, name string) (model.TestSuite, model.TestCase) {
	e.t.Helper()
	ctx := context.Background()
	ts, err := e.svc.TestSuites.CreateSuite(ctx, orgID, eval.SuiteInput{Name: opt.Value(name), AgentID: opt.Value(agentID)})
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.svc.TestSuites.CreateCase(ctx, orgID, ts.ID, eval.CaseInput{Name: opt.Value(name + " case"),
		Script: opt.Value("You are a caller who wants a table."), ScoringRubric: opt.Value("The agent books it."), Attempts: opt.Value(2)})
	if err != nil {
		e.t.Fatal(err)
	}
	return ts, c
}

func (e *env) suiteCases(orgID, suiteID string) []model.TestCase {
	e.t.Helper()
	cs, _, err := e.svc.TestSuites.ListCases(context.Background(), orgID, suiteID, store.Page{Number: 1, Size: 100, SortDir: store.Asc})
	if err != nil {
		e.t.Fatal(err)
	}
	return cs
}

func (e *env) suiteCount(orgID string) int {
	e.t.Helper()
	_, n, err := e.svc.TestSuites.ListSuites(context.Background(), orgID, store.TestSuiteFilter{Page: store.Page{Number: 1, Size: 1}})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestSuiteForms: a suite and its cases through the forms, each refusing
// bad input beside the field and storing nothing.
func TestSuiteForms(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	a := e.newAgentIn(u.OrgID, "Front desk")
	_, other := e.user("globex", "gus@globex.example")
	theirAgent := e.newAgentIn(other.OrgID, "Globex agent")

	p := b.get("/suites")
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, `href="/suites" aria-current="page"`, "No test suite matches.", `<option value="`+a.ID+`">Front desk</option>`)
	wantContains(t, b.get("/suites/new"), `action="/suites"`, `<option value="`+a.ID+`">Front desk</option>`, `maxlength="2000"`)

	p = b.post("/suites", url.Values{"name": {strings.Repeat("s", 129)}, "description": {strings.Repeat("d", 2001)}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="name-error"`, "must be at most 128 characters", `id="agentId-error"`, "is required",
		`id="description-error"`, "must be at most 2000 characters")
	p = b.post("/suites", url.Values{"name": {"Bookings"}, "agentId": {theirAgent.ID}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "names no agent in this organization", `value="Bookings"`)
	if n := e.suiteCount(u.OrgID); n != 0 {
		t.Fatalf("%d suites after refusals", n)
	}

	p = b.post("/suites", url.Values{"name": {"Bookings"}, "agentId": {a.ID}, "description": {"Table bookings"}})
	wantStatus(t, p, http.StatusSeeOther)
	id := strings.TrimPrefix(p.location(), "/suites/")
	if !model.IsUUID(id) {
		t.Fatalf("created suite at %q", p.location())
	}
	wantContains(t, b.get("/suites"), "Bookings", "Front desk", "Table bookings", "1 test suite")
	wantContains(t, b.get("/suites?q=BOOK"), "/suites/"+id)
	if p := b.get("/suites?q=refund"); contains(p.body, "/suites/"+id) {
		t.Fatal("a search for another name lists the suite")
	}
	p = b.get("/suites?pageSize=0&agentId=x")
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "pageSize: must be a whole number between 1 and 100", "agentId: must be a UUID")

	base := "/suites/" + id
	p = b.get(base)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "<h1>Bookings</h1>", `href="/agents/`+a.ID+`">Front desk</a>`, "No test cases yet", "No runs yet.")

	// The suite's edit form.
	wantContains(t, b.get(base+"/edit"), `value="Bookings"`, "Table bookings")
	p = b.post(base, url.Values{"name": {" "}, "agentId": {a.ID}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="name-error"`, "must not be empty")
	if p := b.post(base, url.Values{"name": {"Table bookings"}, "agentId": {a.ID}}); p.location() != base {
		t.Fatalf("edit: %d to %q\n%s", p.status, p.location(), p.body)
	}
	if ts, _ := e.svc.TestSuites.GetSuite(ctx, u.OrgID, id); ts.Name != "Table bookings" || ts.Description != nil {
		t.Fatalf("after the edit: %+v", ts)
	}

	// A case: every field, refused then saved, edited, deleted.
	wantContains(t, b.get(base+"/cases/new"), `name="attempts" type="number" value="1"`, `max="10"`, `maxlength="10000"`)
	p = b.post(base+"/cases", url.Values{"name": {"Party of four"}, "scoringRubric": {"Books it."}, "variables": {"[1]"}, "attempts": {"11"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="variables-error"`, "must be a JSON object")
	p = b.post(base+"/cases", url.Values{"name": {"Party of four"}, "script": {"s"}, "scoringRubric": {"Books it."}, "variables": {`{"name": "A\u0000da"}`}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="variables-error"><li>name: `)
	// A key twice, as the API refuses it.
	p = b.post(base+"/cases", url.Values{"name": {"Party of four"}, "script": {"s"}, "scoringRubric": {"Books it."},
		"variables": {`{"party": {"size": 4, "size": 40}}`}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="variables-error"><li>party.size: duplicate key`)
	p = b.post(base+"/cases", url.Values{"name": {"Party of four"}, "scoringRubric": {"Books it."}, "attempts": {"11"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="script-error"`, "is required", `id="attempts-error"`, "must be 1 to 10", `value="Party of four"`)
	if cs := e.suiteCases(u.OrgID, id); len(cs) != 0 {
		t.Fatalf("cases after refusals: %+v", cs)
	}
	p = b.post(base+"/cases", url.Values{"name": {"Party of four"}, "script": {"You are {{name}}, booking for four."},
		"scoringRubric": {"Books a table for four."}, "variables": {`{"name": "Ada"}`}, "attempts": {"2"}})
	if p.location() != base+"?saved=1#cases" {
		t.Fatalf("add case: %d to %q\n%s", p.status, p.location(), p.body)
	}
	wantContains(t, b.get(base+"?saved=1"), "1 test case saved.", "Party of four", "Books a table for four.")
	cs := e.suiteCases(u.OrgID, id)
	if len(cs) != 1 || cs[0].Attempts != 2 || cs[0].Variables["name"] != "Ada" {
		t.Fatalf("case stored as %+v", cs)
	}
	casePath := base + "/cases/" + cs[0].ID
	wantContains(t, b.get(casePath), `value="Party of four"`, "&#34;name&#34;: &#34;Ada&#34;", `value="2"`)
	p = b.post(casePath, url.Values{"name": {"Party of five"}, "script": {"You book for five."}, "scoringRubric": {""}, "variables": {""}, "attempts": {"3"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="scoringRubric-error"`, "must not be empty")
	p = b.post(casePath, url.Values{"name": {"Party of five"}, "script": {"You book for five."}, "scoringRubric": {"Books for five."}, "variables": {""}, "attempts": {"3"}})
	wantStatus(t, p, http.StatusSeeOther)
	c, err := e.svc.TestSuites.GetCase(ctx, u.OrgID, id, cs[0].ID)
	if err != nil || c.Name != "Party of five" || c.Attempts != 3 || len(c.Variables) != 0 {
		t.Fatalf("case after the edit: %+v, %v", c, err)
	}

	// Starting a run without a language model is refused with the
	// setting's name, and bad options beside their fields; none is stored.
	p = b.post(base+"/runs", url.Values{"mode": {"video"}, "testCaseIds": {"not-a-uuid"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="mode-error"`, "must be one of call, text", `id="testCaseIds-error"`, "testCaseIds[0]: must be a UUID")
	p = b.post(base+"/runs", url.Values{"name": {"Nightly"}, "mode": {"text"}, "testCaseIds": {c.ID}})
	wantStatus(t, p, http.StatusServiceUnavailable)
	wantContains(t, p, `id="run-error"`, "--llm-base-url", `value="Nightly"`, `value="`+c.ID+`" checked`)
	if _, n, _ := e.svc.TestSuites.ListRuns(ctx, u.OrgID, id, store.TestRunFilter{Page: store.Page{Number: 1, Size: 1}}); n != 0 {
		t.Fatalf("%d runs after refusals", n)
	}

	// Generation: the prompt's limits, then the missing model.
	p = b.post(base+"/generate", url.Values{"prompt": {strings.Repeat("p", 5001)}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="prompt-error"`, "must be at most 5000 characters")
	p = b.post(base+"/generate", url.Values{"prompt": {"Bookings for large parties."}})
	wantStatus(t, p, http.StatusServiceUnavailable)
	wantContains(t, p, `id="generate-error"`, "need a language model", "Bookings for large parties.")

	wantContains(t, b.get(casePath+"/delete"), "Delete the test case “Party of five”")
	if p := b.post(casePath+"/delete", nil); p.location() != base+"#cases" {
		t.Fatalf("delete case: %d to %q", p.status, p.location())
	}
	if cs := e.suiteCases(u.OrgID, id); len(cs) != 0 {
		t.Fatalf("cases after the delete: %+v", cs)
	}
	wantContains(t, b.get(base+"/delete"), "Delete the test suite “Table bookings”")
	if p := b.post(base+"/delete", nil); p.location() != "/suites" {
		t.Fatalf("delete suite: %d to %q", p.status, p.location())
	}
	wantStatus(t, b.get(base), http.StatusNotFound)
}

// TestSuiteCSRF: the suite forms refuse a missing or forged token and
// store nothing.
func TestSuiteCSRF(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Front desk")
	ts, _ := e.newSuite(u.OrgID, a.ID, "Bookings")
	base := "/suites/" + ts.ID
	for path, form := range map[string]url.Values{
		"/suites":          {"name": {"Forged"}, "agentId": {a.ID}},
		base:               {"name": {"Forged"}, "agentId": {a.ID}},
		base + "/cases":    {"name": {"Forged"}, "script": {"s"}, "scoringRubric": {"r"}},
		base + "/runs":     {"mode": {"text"}},
		base + "/generate": {"prompt": {"p"}},
		base + "/delete":   {},
	} {
		for _, token := range []string{"forged", ""} {
			form.Set("csrf", token)
			if p := b.post(path, form); p.status != http.StatusForbidden {
				t.Errorf("POST %s with token %q: %d, want 403", path, token, p.status)
			}
		}
	}
	// Signed out, every suite page sends to the sign-in page.
	for _, path := range []string{"/suites", base, base + "/runs/" + model.NewID()} {
		if p := e.browser().get(path); p.location() != "/signin" {
			t.Errorf("GET %s signed out: %d to %q", path, p.status, p.location())
		}
	}
	if n := e.suiteCount(u.OrgID); n != 1 {
		t.Fatalf("%d suites, want 1", n)
	}
	if got, _ := e.svc.TestSuites.GetSuite(context.Background(), u.OrgID, ts.ID); got.Name != "Bookings" {
		t.Fatalf("suite after forged posts: %+v", got)
	}
	if cs := e.suiteCases(u.OrgID, ts.ID); len(cs) != 1 {
		t.Fatalf("%d cases, want 1", len(cs))
	}
}

// newFakeModel is the real OpenAI client talking to a fake model on
// loopback that answers each request with the next of answers.
func newFakeModel(t *testing.T, answers ...string) (*openai.Client, *llmtest.Server) {
	t.Helper()
	var (
		mu   sync.Mutex
		next int
	)
	server := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(answers) {
			t.Errorf("request %d: only %d answers scripted", next+1, len(answers))
			return llmtest.Reply{Status: http.StatusBadRequest, Message: "unexpected request"}
		}
		next++
		return llmtest.Reply{Text: []string{answers[next-1]}}
	})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return openai.New(openai.Config{BaseURL: server.URL, APIKey: "sk-test-0123456789abcdef", Model: "gen-model", HTTPClient: &http.Client{Transport: tr}}), server
}

// contents is each message of a model request as "role: content".
func contents(r llmtest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		role, _ := m["role"].(string)
		content, _ := m["content"].(string)
		out = append(out, role+": "+content)
	}
	return out
}

var previousMessagesInput = regexp.MustCompile(`name="previousMessages" value="([^"]*)"`)

// TestGenerateAndSaveTests: generated tests are shown, the kept ones saved
// together, and the conversation sent back to refine them.
func TestGenerateAndSaveTests(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Front desk")
	ts, first := e.newSuite(u.OrgID, a.ID, "Bookings")
	answers := []string{
		`{"tests":[{"name":"Party of four","script":"You book for four & ask about <parking>.","scoringRubric":"Books for four."},` +
			`{"name":"Full evening","script":"You insist on Saturday at 8.","scoringRubric":"Offers another time."}]}`,
		`{"tests":[{"name":"Impatient party","script":"You are in a hurry.","scoringRubric":"Books quickly."}]}`,
	}
	client, fake := newFakeModel(t, answers...)
	e.svc.TestSuites.Generator = eval.Generator{LLM: client}
	base := "/suites/" + ts.ID

	p := b.post(base+"/generate", url.Values{"prompt": {"Bookings, including a full evening."}})
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "2 generated tests", "Party of four", "You book for four &amp; ask about &lt;parking&gt;.", "Full evening",
		`name="keep" value="1" checked`, "Refine tests")
	m := previousMessagesInput.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no conversation to refine:\n%s", p.body)
	}
	conversation := html.UnescapeString(m[1])

	// A tampered form saves nothing.
	form := url.Values{"keep": {"1", "7"}, "name": {"Party of four", "Full evening"}, "script": {"a", "b"}, "scoringRubric": {"c", "d"}}
	p = b.post(base+"/cases/generated", form)
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "No test case was saved", "Full evening")
	form.Set("keep", "1")
	form["script"] = []string{"a", " "}
	wantStatus(t, b.post(base+"/cases/generated", form), http.StatusBadRequest)
	if cs := e.suiteCases(u.OrgID, ts.ID); len(cs) != 1 {
		t.Fatalf("%d cases after refusals, want 1", len(cs))
	}

	form = url.Values{"keep": {"1"}, "name": {"Party of four", "Full evening"}, "script": {"s4", "You insist on Saturday at 8."},
		"scoringRubric": {"r4", "Offers another time."}}
	if p := b.post(base+"/cases/generated", form); p.location() != base+"?saved=1#cases" {
		t.Fatalf("save: %d to %q\n%s", p.status, p.location(), p.body)
	}
	cs := e.suiteCases(u.OrgID, ts.ID)
	if len(cs) != 2 || cs[0].ID != first.ID || cs[1].Name != "Full evening" || cs[1].Script != "You insist on Saturday at 8." || cs[1].Attempts != 1 {
		t.Fatalf("cases after the save: %+v", cs)
	}

	p = b.post(base+"/generate", url.Values{"prompt": {"Make the callers impatient."}, "previousMessages": {conversation}})
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "1 generated test", "Impatient party")
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	got := contents(reqs[1])
	if len(got) != 4 || got[1] != "user: Bookings, including a full evening." || !strings.HasPrefix(got[2], "assistant: {\"tests\"") || got[3] != "user: Make the callers impatient." {
		t.Fatalf("the refinement sent %q", got)
	}

	p = b.post(base+"/generate", url.Values{"prompt": {"Again."}, "previousMessages": {`{"not": "a list"}`}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "is not the conversation this page sent")
}

// TestSuiteListPages: the list pages as the API does, oldest last, and
// the links keep the filters.
func TestSuiteListPages(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Front desk")
	var ids []string
	for _, name := range []string{"Alpha", "Beta", "Gamma"} {
		ts, _ := e.newSuite(u.OrgID, a.ID, name)
		ids = append(ids, ts.ID)
	}
	// The agent's page leads to its suites.
	wantContains(t, b.get("/agents/"+a.ID), `href="/suites?agentId=`+a.ID+`"`)
	p := b.get("/suites?pageSize=2&agentId=" + a.ID)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "3 test suites", "Page 1 of 2", `href="/suites?agentId=`+a.ID+`&amp;page=2&amp;pageSize=2" rel="next"`, "/suites/"+ids[2], "/suites/"+ids[1])
	if contains(p.body, "/suites/"+ids[0]) {
		t.Fatal("page 1 of 2 shows the oldest suite")
	}
	p = b.get("/suites?pageSize=2&page=2&agentId=" + a.ID)
	wantContains(t, p, "Page 2 of 2", `rel="prev"`, "/suites/"+ids[0])
	if contains(p.body, "/suites/"+ids[2]) {
		t.Fatal("page 2 of 2 shows the newest suite")
	}
}

// TestSuiteFormOffersEveryAgent: a suite whose agent sorts past the first
// 100 keeps it selected on its edit form (a required select with the agent
// missing would fall to the first option, and saving would move the suite
// to another agent), and the list names it.
func TestSuiteFormOffersEveryAgent(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	for i := range maxPageSize + 1 {
		e.newAgentIn(u.OrgID, fmt.Sprintf("Agent %03d", i))
	}
	last := e.newAgentIn(u.OrgID, "Zed")
	ts, _ := e.newSuite(u.OrgID, last.ID, "Far")
	wantContains(t, b.get("/suites/"+ts.ID+"/edit"), `<option value="`+last.ID+`" selected>Zed</option>`)
	p := b.get("/suites")
	wantContains(t, p, "Zed")
	if contains(p.body, ">"+last.ID+"<") {
		t.Fatal("the suite list names the agent by its id")
	}
}
