package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/webhook"
)

// createSuite creates a suite as acme for agentID.
func (e *env) createSuite(agentID string) map[string]any {
	e.t.Helper()
	return e.create("/v1/test-suites", map[string]any{"name": "Bookings", "agentId": agentID})
}

// createCase adds a case to a suite as acme: a valid case plus extra keys.
func (e *env) createCase(suiteID string, extra map[string]any) map[string]any {
	e.t.Helper()
	body := map[string]any{"name": "Books a table", "script": "You want a table for two.", "scoringRubric": "The agent asks for the time."}
	for k, v := range extra {
		body[k] = v
	}
	return e.create("/v1/test-suites/"+suiteID+"/test-cases", body)
}

// waitRun polls a run until it has status, and returns it.
func waitRun(t *testing.T, e *env, runPath, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.must(http.StatusOK, "GET", runPath, nil).Data(t)
		if r["status"] == status {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %v, want %s: %v", runPath, r["status"], status, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHung waits until a simulated caller's model request hangs.
func waitHung(t *testing.T, e *env) {
	t.Helper()
	select {
	case <-e.model.hung:
	case <-time.After(30 * time.Second):
		t.Fatal("no simulated caller reached the model")
	}
}

func attemptsOf(t *testing.T, run map[string]any) []map[string]any {
	t.Helper()
	raw, ok := run["attempts"].([]any)
	if !ok {
		t.Fatalf("run without attempts: %v", run)
	}
	out := make([]map[string]any, len(raw))
	for i, a := range raw {
		out[i] = a.(map[string]any)
	}
	return out
}

func ids(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it["id"].(string)
	}
	return out
}

func TestTestSuiteCRUD(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			e := newEnv(t, engine)
			agent := e.createAgent(nil)["id"].(string)
			other := e.createAgent(map[string]any{"name": "Other"})["id"].(string)

			s := e.create("/v1/test-suites", map[string]any{"name": "Bookings", "agentId": agent, "description": "Table bookings"})
			suite := "/v1/test-suites/" + s["id"].(string)
			if s["name"] != "Bookings" || s["agentId"] != agent || s["description"] != "Table bookings" || s["createdAt"] == nil {
				t.Errorf("created suite = %v", s)
			}
			if got := e.must(http.StatusOK, "GET", suite, nil).Data(t); !jsonEqual(got, s) {
				t.Errorf("GET = %v, want %v", got, s)
			}
			u := e.must(http.StatusOK, "PATCH", suite, map[string]any{"name": "Bookings v2", "agentId": other, "description": nil}).Data(t)
			if u["name"] != "Bookings v2" || u["agentId"] != other || u["description"] != nil || u["createdAt"] != s["createdAt"] {
				t.Errorf("updated suite = %v", u)
			}
			if got := e.must(http.StatusOK, "GET", suite, nil).Data(t); !jsonEqual(got, u) {
				t.Errorf("GET after PATCH = %v, want %v", got, u)
			}

			c := e.create(suite+"/test-cases", map[string]any{"name": "Books", "script": "Book for {{n}}.", "scoringRubric": "Asks the time."})
			tc := suite + "/test-cases/" + c["id"].(string)
			if c["testSuiteId"] != s["id"] || c["attempts"] != 1.0 || !jsonEqual(c["variables"], map[string]any{}) || c["script"] != "Book for {{n}}." {
				t.Errorf("created case = %v", c)
			}
			if got := e.must(http.StatusOK, "GET", tc, nil).Data(t); !jsonEqual(got, c) {
				t.Errorf("GET case = %v, want %v", got, c)
			}
			cu := e.must(http.StatusOK, "PATCH", tc, map[string]any{"attempts": 3, "variables": map[string]any{"n": 2, "nested": map[string]any{"bogus": true}}, "scoringRubric": "Asks the time and the size."}).Data(t)
			if cu["attempts"] != 3.0 || cu["name"] != "Books" || cu["scoringRubric"] != "Asks the time and the size." || !jsonEqual(cu["variables"], map[string]any{"n": 2, "nested": map[string]any{"bogus": true}}) {
				t.Errorf("updated case = %v", cu)
			}
			if got := e.must(http.StatusOK, "PATCH", tc, map[string]any{"variables": nil}).Data(t); !jsonEqual(got["variables"], map[string]any{}) || got["attempts"] != 3.0 {
				t.Errorf("variables: null = %v", got)
			}
			e.must(http.StatusNoContent, "DELETE", tc, nil)
			e.must(http.StatusNotFound, "GET", tc, nil)
			e.must(http.StatusNotFound, "DELETE", tc, nil)

			// Deleting a suite takes its cases with it.
			kept := e.createCase(s["id"].(string), nil)
			e.must(http.StatusNoContent, "DELETE", suite, nil)
			e.must(http.StatusNotFound, "GET", suite, nil)
			e.must(http.StatusNotFound, "GET", suite+"/test-cases/"+kept["id"].(string), nil)
			e.must(http.StatusNotFound, "GET", suite+"/test-cases", nil)
			e.must(http.StatusNotFound, "DELETE", suite, nil)

			// A suite keeps its agentId when the agent is deleted.
			s2 := e.createSuite(agent)
			e.must(http.StatusNoContent, "DELETE", "/v1/agents/"+agent, nil)
			if got := e.must(http.StatusOK, "GET", "/v1/test-suites/"+s2["id"].(string), nil).Data(t); got["agentId"] != agent {
				t.Errorf("suite of a deleted agent = %v", got)
			}
			// Malformed and unknown ids name nothing.
			for _, path := range []string{"/v1/test-suites/nope", "/v1/test-suites/" + model.NewID(), "/v1/test-suites/" + s2["id"].(string) + "/test-cases/nope",
				"/v1/test-suites/" + s2["id"].(string) + "/test-cases/" + model.NewID(), "/v1/test-suites/" + s2["id"].(string) + "/runs/" + model.NewID()} {
				if r := e.do("GET", path, nil); r.Status != http.StatusNotFound || r.ErrorCode(t) != codeNotFound {
					t.Errorf("GET %s = %d %s", path, r.Status, r.Body)
				}
			}
		})
	}
}

func TestTestSuiteValidation(t *testing.T) {
	e := newEnv(t)
	agent := e.createAgent(nil)["id"].(string)
	globexAgent := e.request("POST", "/v1/agents", map[string]any{"name": "G", "promptTemplate": "p"}, e.otherKey).Data(t)["id"].(string)
	const suites = "/v1/test-suites"
	ok := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "S", "agentId": agent}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	e.invalid(codeValidationFailed, "POST", suites, map[string]any{}, "name", "agentId")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"name": str(129)}), "name")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"name": " \t"}), "name")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"name": nil}), "name")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"description": str(2001)}), "description")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"agentId": "nope"}), "agentId")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"agentId": nil}), "agentId")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"agentId": model.NewID()}), "agentId")
	e.invalid(codeValidationFailed, "POST", suites, ok(map[string]any{"agentId": globexAgent}), "agentId")
	e.invalid(codeInvalidJSON, "POST", suites, ok(map[string]any{"bogus": 1}), "bogus")
	e.invalid(codeInvalidJSON, "POST", suites, ok(map[string]any{"name": 5}), "name")
	e.invalid(codeInvalidJSON, "POST", suites, "[]")
	s := e.create(suites, ok(map[string]any{"name": str(128), "description": str(2000)}))
	suite := suites + "/" + s["id"].(string)
	e.invalid(codeValidationFailed, "PATCH", suite, map[string]any{"agentId": nil}, "agentId")
	e.invalid(codeValidationFailed, "PATCH", suite, map[string]any{"name": nil}, "name")
	e.invalid(codeValidationFailed, "PATCH", suite, map[string]any{"agentId": model.NewID()}, "agentId")
	e.invalid(codeValidationFailed, "PATCH", suite, map[string]any{"agentId": globexAgent}, "agentId")
	e.invalid(codeInvalidJSON, "PATCH", suite, map[string]any{"agentID": agent}, "agentID")
	if got := e.must(http.StatusOK, "GET", suite, nil).Data(t); !jsonEqual(got, s) {
		t.Errorf("refused updates changed the suite: %v", got)
	}

	cases := suite + "/test-cases"
	valid := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "C", "script": "s", "scoringRubric": "r"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	vars := map[string]any{}
	for i := range 101 {
		vars[fmt.Sprint("v", i)] = i
	}
	e.invalid(codeValidationFailed, "POST", cases, map[string]any{}, "name", "script", "scoringRubric")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"name": str(129), "script": str(10001), "scoringRubric": str(5001)}), "name", "script", "scoringRubric")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"name": " ", "script": "\n", "scoringRubric": ""}), "name", "script", "scoringRubric")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"script": nil}), "script")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"attempts": 0}), "attempts")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"attempts": 11}), "attempts")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"attempts": nil}), "attempts")
	e.invalid(codeValidationFailed, "POST", cases, valid(map[string]any{"variables": vars}), "variables")
	e.invalid(codeInvalidJSON, "POST", cases, valid(map[string]any{"attempts": "2"}), "attempts")
	e.invalid(codeInvalidJSON, "POST", cases, valid(map[string]any{"attempts": 1.5}), "attempts")
	e.invalid(codeInvalidJSON, "POST", cases, valid(map[string]any{"variables": "x"}), "variables")
	e.invalid(codeInvalidJSON, "POST", cases, valid(map[string]any{"rubric": "r"}), "rubric")
	delete(vars, "v0")
	c := e.create(cases, valid(map[string]any{"name": str(128), "script": str(10000), "scoringRubric": str(5000), "attempts": 10, "variables": vars}))
	if c["attempts"] != 10.0 || len(c["variables"].(map[string]any)) != 100 {
		t.Errorf("case at the limits = %v", c)
	}
	tc := cases + "/" + c["id"].(string)
	e.invalid(codeValidationFailed, "PATCH", tc, map[string]any{"name": nil, "script": "", "scoringRubric": str(5001), "attempts": 0}, "name", "script", "scoringRubric", "attempts")
	e.invalid(codeInvalidJSON, "PATCH", tc, map[string]any{"testSuiteId": model.NewID()}, "testSuiteId")
	if got := e.must(http.StatusOK, "GET", tc, nil).Data(t); !jsonEqual(got, c) {
		t.Errorf("refused updates changed the case: %v", got)
	}
	// A case for a suite that does not exist is not found, not invalid.
	e.must(http.StatusNotFound, "POST", suites+"/"+model.NewID()+"/test-cases", valid(nil))

	// Run requests are checked before anything else (this env has no model).
	runs := suite + "/runs"
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"mode": "video"}, "mode")
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"mode": nil}, "mode")
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"name": " "}, "name")
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"name": str(129)}, "name")
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"testCaseIds": []any{}}, "testCaseIds")
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"testCaseIds": []any{c["id"], "x"}}, "testCaseIds[1]")
	e.invalid(codeInvalidJSON, "POST", runs, map[string]any{"attempts": 2}, "attempts")
	e.invalid(codeInvalidJSON, "POST", runs, "not json")

	// Query parameters are strict.
	for _, c := range []struct{ path, field string }{
		{suites + "?pageSize=0", "pageSize"}, {suites + "?pageSize=101", "pageSize"}, {suites + "?page=0", "page"},
		{suites + "?sortDir=up", "sortDir"}, {suites + "?agentId=nope", "agentId"}, {suites + "?sortBy=name", "sortBy"},
		{cases + "?sortDir=sideways", "sortDir"}, {cases + "?agentId=" + agent, "agentId"},
		{runs + "?includeAttempts=maybe", "includeAttempts"}, {runs + "?pageSize=x", "pageSize"}, {runs + "?status=running", "status"},
		{suite + "?includeAttempts=true", "includeAttempts"},
	} {
		e.invalid(codeValidationFailed, "GET", c.path, nil, c.field)
	}
}

func TestTestSuiteAndCaseLists(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			e := newEnv(t, engine)
			a := e.createAgent(nil)["id"].(string)
			b := e.createAgent(map[string]any{"name": "B"})["id"].(string)
			var suites []map[string]any
			for _, agent := range []string{a, b, a} {
				suites = append(suites, e.createSuite(agent))
			}
			page := func(path string) ([]string, map[string]any) {
				r := e.must(http.StatusOK, "GET", path, nil)
				return ids(r.List(t)), r.JSON(t)
			}
			all := ids(suites)
			newest := slices.Clone(all)
			slices.Reverse(newest)
			checkPage := func(path string, want []string, total float64, next bool) {
				t.Helper()
				got, body := page(path)
				if !slices.Equal(got, want) || body["total"] != total || body["hasNextPage"] != next {
					t.Errorf("GET %s = %v total %v next %v; want %v total %v next %v", path, got, body["total"], body["hasNextPage"], want, total, next)
				}
			}
			checkPage("/v1/test-suites", newest, 3, false)
			checkPage("/v1/test-suites?sortDir=asc", all, 3, false)
			checkPage("/v1/test-suites?pageSize=2", newest[:2], 3, true)
			checkPage("/v1/test-suites?pageSize=2&page=2", newest[2:], 3, false)
			checkPage("/v1/test-suites?pageSize=2&page=3", []string{}, 3, false)
			checkPage("/v1/test-suites?agentId="+a+"&sortDir=asc", []string{all[0], all[2]}, 2, false)
			checkPage("/v1/test-suites?agentId="+b, []string{all[1]}, 1, false)
			checkPage("/v1/test-suites?agentId="+model.NewID(), []string{}, 0, false)

			suite := suites[0]["id"].(string)
			var cases []map[string]any
			for i := range 3 {
				cases = append(cases, e.createCase(suite, map[string]any{"name": fmt.Sprint("case ", i)}))
			}
			e.createCase(suites[1]["id"].(string), nil) // another suite's
			oldest := ids(cases)
			latest := slices.Clone(oldest)
			slices.Reverse(latest)
			base := "/v1/test-suites/" + suite + "/test-cases"
			checkPage(base, oldest, 3, false) // oldest first by default
			checkPage(base+"?sortDir=asc", oldest, 3, false)
			checkPage(base+"?sortDir=desc", latest, 3, false)
			checkPage(base+"?pageSize=1", oldest[:1], 3, true)
			checkPage(base+"?pageSize=2&page=2", oldest[2:], 3, false)
			checkPage(base+"?page=9", []string{}, 3, false)
			checkPage("/v1/test-suites/"+suites[2]["id"].(string)+"/test-cases", []string{}, 0, false)
		})
	}
}

// A text-mode run: every attempt judged, counters and pass rates, the
// run list's pagination, sortDir and includeAttempts, and the
// test_run.completed webhook.
func TestTestRunText(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			e := newEnv(t, engine, withModel(false))
			agent := e.createAgent(map[string]any{"postCallWebhookUrl": "https://hooks.example.com/parley"})["id"].(string)
			s := e.createSuite(agent)["id"].(string)
			passes := e.createCase(s, map[string]any{"name": "Passes"})
			fails := e.createCase(s, map[string]any{"name": "Fails", "scoringRubric": "The agent sings. " + verdictFail})
			flaky := e.createCase(s, map[string]any{"name": "Flaky", "scoringRubric": "Sometimes. " + verdictFlaky, "attempts": 2})
			runs := "/v1/test-suites/" + s + "/runs"

			started := e.must(http.StatusCreated, "POST", runs, map[string]any{"mode": "text", "name": "Nightly"}).Data(t)
			if started["status"] != "running" || started["mode"] != "text" || started["name"] != "Nightly" || started["totalTests"] != 4.0 ||
				started["passedTests"] != 0.0 || started["failedTests"] != 0.0 || started["testSuiteId"] != s || started["agentId"] != agent ||
				started["startedAt"] == nil || started["completedAt"] != nil {
				t.Errorf("started run = %v", started)
			}
			var order []string
			for _, a := range attemptsOf(t, started) {
				if a["status"] != "pending" || a["mode"] != "text" || a["passed"] != nil {
					t.Errorf("new attempt = %v", a)
				}
				order = append(order, fmt.Sprint(a["testCaseName"], "#", a["attemptNumber"]))
			}
			if want := []string{"Passes#1", "Fails#1", "Flaky#1", "Flaky#2"}; !slices.Equal(order, want) {
				t.Errorf("attempts %v, want %v", order, want)
			}
			run := runs + "/" + started["id"].(string)
			done := waitRun(t, e, run, "completed")
			if done["passedTests"] != 2.0 || done["failedTests"] != 2.0 || done["totalTests"] != 4.0 || done["completedAt"] == nil || done["errorMessage"] != nil {
				t.Errorf("completed run = %v", done)
			}
			for _, a := range attemptsOf(t, done) {
				passed, _ := a["passed"].(bool)
				if want := map[bool]string{true: "passed", false: "failed"}[passed]; a["status"] != want || a["passed"] == nil ||
					a["reasoning"] != "The agent asked for the time." || a["errorMessage"] != nil || a["callId"] != nil || a["inboundCallId"] != nil ||
					a["startedAt"] == nil || a["completedAt"] == nil {
					t.Errorf("finished attempt = %v", a)
				}
				if tr, _ := a["transcript"].([]any); len(tr) < 2 {
					t.Errorf("attempt transcript = %v", a["transcript"])
				}
				switch a["testCaseId"] {
				case passes["id"]:
					if a["passed"] != true {
						t.Errorf("passing case's attempt = %v", a)
					}
				case fails["id"]:
					if a["passed"] != false {
						t.Errorf("failing case's attempt = %v", a)
					}
				}
			}
			rates := map[string]any{}
			for _, cr := range done["caseResults"].([]any) {
				cr := cr.(map[string]any)
				rates[cr["testCaseName"].(string)] = []any{cr["attempts"], cr["passed"], cr["failed"], cr["passRate"]}
			}
			want := map[string]any{"Passes": []any{1, 1, 0, 1}, "Fails": []any{1, 0, 1, 0}, "Flaky": []any{2, 1, 1, 0.5}}
			if !jsonEqual(rates, want) {
				t.Errorf("case results %v, want %v", rates, want)
			}
			if done["caseResults"].([]any)[2].(map[string]any)["testCaseId"] != flaky["id"] {
				t.Errorf("case results out of suite order: %v", done["caseResults"])
			}

			// test_run.completed went to the agent's post-call URL, with
			// the run as GET answers it.
			select {
			case d := <-e.model.delivered:
				var body map[string]any
				if err := json.Unmarshal(d.Body, &body); err != nil {
					t.Fatal(err)
				}
				if d.Event != webhook.EventTestRunCompleted || d.URL != "https://hooks.example.com/parley" || body["event"] != "test_run.completed" ||
					!jsonEqual(body["testRun"].(map[string]any)["attempts"], done["attempts"]) {
					t.Errorf("delivery %s %s: %s", d.Event, d.URL, d.Body)
				}
				checkSchema(t, e, "TestRunCompletedPayload", body)
			case <-time.After(30 * time.Second):
				t.Fatal("test_run.completed was not delivered")
			}

			// Two more runs of one case, for the list.
			second := e.must(http.StatusCreated, "POST", runs, map[string]any{"mode": "text", "testCaseIds": []any{passes["id"]}}).Data(t)
			if second["totalTests"] != 1.0 || second["name"] != "Run of Bookings" {
				t.Errorf("run of one case = %v", second)
			}
			third := e.must(http.StatusCreated, "POST", runs, map[string]any{"mode": "text", "testCaseIds": []any{passes["id"], fails["id"]}}).Data(t)
			waitRun(t, e, runs+"/"+second["id"].(string), "completed")
			waitRun(t, e, runs+"/"+third["id"].(string), "completed")
			created := []string{started["id"].(string), second["id"].(string), third["id"].(string)}
			newest := slices.Clone(created)
			slices.Reverse(newest)
			list := func(query string) ([]map[string]any, map[string]any) {
				r := e.must(http.StatusOK, "GET", runs+query, nil)
				return r.List(t), r.JSON(t)
			}
			for _, c := range []struct {
				query string
				want  []string
				next  bool
			}{
				{"", newest, false}, {"?sortDir=asc", created, false}, {"?sortDir=desc&pageSize=2", newest[:2], true},
				{"?pageSize=2&page=2", newest[2:], false}, {"?page=2", []string{}, false},
			} {
				items, body := list(c.query)
				if got := ids(items); !slices.Equal(got, c.want) || body["total"] != 3.0 || body["hasNextPage"] != c.next {
					t.Errorf("GET runs%s = %v total %v next %v; want %v", c.query, got, body["total"], body["hasNextPage"], c.want)
				}
				for _, r := range items {
					if _, ok := r["attempts"]; ok {
						t.Errorf("runs%s: attempts without includeAttempts", c.query)
					}
					if _, ok := r["caseResults"]; ok {
						t.Errorf("runs%s: caseResults without includeAttempts", c.query)
					}
				}
			}
			items, _ := list("?includeAttempts=false")
			if _, ok := items[0]["attempts"]; ok {
				t.Error("includeAttempts=false has attempts")
			}
			items, _ = list("?includeAttempts=true&sortDir=asc")
			for i, r := range items {
				if n := len(attemptsOf(t, r)); n != []int{4, 1, 2}[i] || r["caseResults"] == nil {
					t.Errorf("run %d with attempts: %d attempts, %v", i, n, r["caseResults"])
				}
			}
			if !jsonEqual(items[0]["attempts"], done["attempts"]) {
				t.Errorf("listed attempts differ from GET's")
			}
		})
	}
}

// checkSchema validates v against a schema of the document's components.
func checkSchema(t *testing.T, e *env, name string, v any) {
	t.Helper()
	ref := e.contract.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		t.Fatalf("openapi.yaml has no schema %s", name)
	}
	b, _ := json.Marshal(v)
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	if err := ref.Value.VisitJSON(generic, formatOptions()...); err != nil {
		t.Errorf("%s does not match the document: %v", name, err)
	}
}

func TestTestRunCancel(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			e := newEnv(t, engine, withModel(false))
			agent := e.createAgent(map[string]any{"postCallWebhookUrl": "https://hooks.example.com/parley"})["id"].(string)
			s := e.createSuite(agent)["id"].(string)
			e.createCase(s, map[string]any{"script": "Say hello. " + scriptHang, "attempts": 2})
			runs := "/v1/test-suites/" + s + "/runs"
			started := e.must(http.StatusCreated, "POST", runs, map[string]any{"mode": "text"}).Data(t)
			run := runs + "/" + started["id"].(string)
			waitHung(t, e)
			if r := e.must(http.StatusOK, "GET", run, nil).Data(t); r["status"] != "running" {
				t.Fatalf("run with a hanging caller = %v", r)
			}
			// A suite with a run under way cannot be deleted.
			if r := e.do("DELETE", "/v1/test-suites/"+s, nil); r.Status != http.StatusConflict || r.ErrorCode(t) != codeConflict {
				t.Errorf("DELETE suite with a running run = %d %s", r.Status, r.Body)
			}

			canceled := e.must(http.StatusOK, "POST", run+"/cancel", nil).Data(t)
			if canceled["status"] != "canceled" || canceled["completedAt"] == nil || canceled["errorMessage"] == nil ||
				canceled["failedTests"] != 2.0 || canceled["passedTests"] != 0.0 {
				t.Errorf("canceled run = %v", canceled)
			}
			for _, a := range attemptsOf(t, canceled) {
				if a["status"] != "failed" || a["errorMessage"] != "the run was canceled" || a["passed"] != nil || a["completedAt"] == nil {
					t.Errorf("canceled attempt = %v", a)
				}
			}
			if r := e.do("POST", run+"/cancel", nil); r.Status != http.StatusConflict || r.ErrorCode(t) != codeConflict {
				t.Errorf("second cancel = %d %s", r.Status, r.Body)
			}
			select {
			case d := <-e.model.delivered:
				var body map[string]any
				if err := json.Unmarshal(d.Body, &body); err != nil {
					t.Fatal(err)
				}
				if tr := body["testRun"].(map[string]any); tr["status"] != "canceled" || tr["id"] != started["id"] {
					t.Errorf("test_run.completed of a canceled run: %s", d.Body)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("test_run.completed was not delivered on cancel")
			}
			if got := e.must(http.StatusOK, "GET", run, nil).Data(t); !jsonEqual(got, canceled) {
				t.Errorf("GET after cancel = %v, want %v", got, canceled)
			}
			e.must(http.StatusNoContent, "DELETE", "/v1/test-suites/"+s, nil)
			e.must(http.StatusNotFound, "GET", run, nil)
		})
	}
}

// The judge's answer is not a verdict, twice: the attempt fails saying so,
// and the run still completes.
func TestTestRunMalformedVerdict(t *testing.T) {
	e := newEnv(t, withModel(false))
	s := e.createSuite(e.createAgent(nil)["id"].(string))["id"].(string)
	e.createCase(s, map[string]any{"scoringRubric": "Greets. " + verdictMalformed})
	runs := "/v1/test-suites/" + s + "/runs"
	started := e.must(http.StatusCreated, "POST", runs, map[string]any{"mode": "text"}).Data(t)
	done := waitRun(t, e, runs+"/"+started["id"].(string), "completed")
	a := attemptsOf(t, done)[0]
	msg, _ := a["errorMessage"].(string)
	if a["status"] != "failed" || a["passed"] != nil || !strings.Contains(msg, "verdict") || done["failedTests"] != 1.0 {
		t.Errorf("attempt with a malformed verdict = %v", a)
	}
	if n := e.model.judgeRequests(verdictMalformed); n != 2 {
		t.Errorf("the judge was asked %d times, want 2 (one retry)", n)
	}
}

// Runs that could only fail are refused before anything is stored.
func TestTestRunRefusals(t *testing.T) {
	e := newEnv(t, withModel(false))
	agent := e.createAgent(nil)["id"].(string)
	s := e.createSuite(agent)["id"].(string)
	runs := "/v1/test-suites/" + s + "/runs"
	conflict := func(body any, about string) {
		t.Helper()
		r := e.do("POST", runs, body)
		if r.Status != http.StatusConflict || r.ErrorCode(t) != codeConflict {
			t.Fatalf("POST runs %v = %d %s", body, r.Status, r.Body)
		}
		if msg := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, about) {
			t.Errorf("POST runs %v: message %q does not mention %q", body, msg, about)
		}
	}
	conflict(map[string]any{"mode": "text"}, "no test cases")
	c := e.createCase(s, nil)
	e.invalid(codeValidationFailed, "POST", runs, map[string]any{"mode": "text", "testCaseIds": []any{model.NewID()}}, "testCaseIds[0]")
	// Call mode needs telephony, which this server does not have.
	conflict(nil, "telephony")
	conflict(map[string]any{"mode": "call"}, "telephony")
	e.must(http.StatusOK, "PATCH", "/v1/agents/"+agent, map[string]any{"status": "disabled"})
	conflict(map[string]any{"mode": "text"}, "disabled")
	e.must(http.StatusNoContent, "DELETE", "/v1/agents/"+agent, nil)
	conflict(map[string]any{"mode": "text", "testCaseIds": []any{c["id"]}}, "deleted")
	if r := e.do("POST", "/v1/test-suites/"+s+"/generate-tests", map[string]any{"prompt": "x"}); r.Status != http.StatusConflict {
		t.Errorf("generate for a deleted agent = %d %s", r.Status, r.Body)
	}
	if items := e.must(http.StatusOK, "GET", runs, nil).List(t); len(items) != 0 {
		t.Errorf("refused runs were stored: %v", items)
	}

	// With telephony, a call-mode attempt holds two lines.
	e2 := newEnv(t, withModel(true))
	s2 := e2.createSuite(e2.createAgent(nil)["id"].(string))["id"].(string)
	e2.createCase(s2, nil)
	e2.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"concurrencyLimit": 1})
	if r := e2.do("POST", "/v1/test-suites/"+s2+"/runs", nil); r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "concurrencyLimit") {
		t.Errorf("call-mode run with one line = %d %s", r.Status, r.Body)
	}

	// Without a language model nothing can be judged.
	e3 := newEnv(t)
	s3 := e3.createSuite(e3.createAgent(nil)["id"].(string))["id"].(string)
	e3.createCase(s3, nil)
	for _, body := range []any{nil, map[string]any{"mode": "text"}} {
		r := e3.do("POST", "/v1/test-suites/"+s3+"/runs", body)
		if r.Status != http.StatusServiceUnavailable || r.ErrorCode(t) != "unavailable" || !strings.Contains(string(r.Body), "--llm-base-url") {
			t.Errorf("run without a model = %d %s", r.Status, r.Body)
		}
	}
	if r := e3.do("POST", "/v1/test-suites/"+model.NewID()+"/runs", map[string]any{"mode": "text"}); r.Status != http.StatusNotFound {
		t.Errorf("run of an unknown suite without a model = %d %s", r.Status, r.Body)
	}
}

func TestGenerateTestsValidation(t *testing.T) {
	e := newEnv(t)
	s := e.createSuite(e.createAgent(nil)["id"].(string))["id"].(string)
	gen := "/v1/test-suites/" + s + "/generate-tests"
	msgs := func(n int, m map[string]any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = m
		}
		return out
	}
	user := map[string]any{"role": "user", "content": "Two tests."}
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{}, "prompt")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": " \n "}, "prompt")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": nil}, "prompt")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": str(5001)}, "prompt")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": msgs(51, user)}, "previousMessages")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": nil}, "previousMessages")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": []any{user, map[string]any{"role": "system", "content": "c"}}}, "previousMessages[1].role")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": []any{map[string]any{"role": nil, "content": "c"}}}, "previousMessages[0].role")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": []any{map[string]any{"role": "user"}}}, "previousMessages[0].content")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": []any{map[string]any{"content": nil}}}, "previousMessages[0].content")
	e.invalid(codeValidationFailed, "POST", gen, map[string]any{"prompt": "x", "previousMessages": []any{map[string]any{"content": str(20001)}}}, "previousMessages[0].content")
	e.invalid(codeInvalidJSON, "POST", gen, map[string]any{"prompt": "x", "previousMessages": []any{map[string]any{"content": "c", "name": "n"}}}, "previousMessages[0].name")
	e.invalid(codeInvalidJSON, "POST", gen, map[string]any{"prompt": "x", "previousMessages": "c"}, "previousMessages")
	e.invalid(codeInvalidJSON, "POST", gen, map[string]any{"prompt": "x", "count": 3}, "count")

	// At the limits the request is valid: here no model answers it.
	atLimits := map[string]any{"prompt": str(5000), "previousMessages": msgs(50, map[string]any{"content": str(20000)})}
	r := e.do("POST", gen, atLimits)
	if r.Status != http.StatusServiceUnavailable || r.ErrorCode(t) != "unavailable" || !strings.Contains(string(r.Body), "--llm-base-url") {
		t.Errorf("generate without a model = %d %s", r.Status, r.Body)
	}
	if r := e.do("POST", "/v1/test-suites/"+model.NewID()+"/generate-tests", map[string]any{"prompt": "x"}); r.Status != http.StatusNotFound {
		t.Errorf("generate for an unknown suite = %d %s", r.Status, r.Body)
	}
}

func TestGenerateTests(t *testing.T) {
	e := newEnv(t, withModel(false))
	agent := e.createAgent(map[string]any{"promptTemplate": "You take bookings for Chez Parley.", "firstMessage": "Chez Parley, hello!"})["id"].(string)
	s := e.createSuite(agent)["id"].(string)
	gen := "/v1/test-suites/" + s + "/generate-tests"

	first := e.must(http.StatusOK, "POST", gen, map[string]any{"prompt": "Bookings for two."}).Data(t)
	tests := first["tests"].([]any)
	if len(tests) != 1 || tests[0].(map[string]any)["name"] != "Books a table for two" {
		t.Errorf("tests = %v", first["tests"])
	}
	checkConversation(t, first["messages"], "Bookings for two.")
	// The agent's prompt and opening are the generator's context.
	reqs := e.model.generatorRequests()
	if len(reqs) != 1 || !strings.Contains(allContent(reqs[0]), "You take bookings for Chez Parley.") || !strings.Contains(allContent(reqs[0]), "Chez Parley, hello!") {
		t.Fatalf("generator requests: %v", reqs)
	}
	// Refining: the earlier conversation goes back, roles filled in.
	previous := []any{map[string]any{"content": "Bookings for two."}, map[string]any{"content": generatedTests}}
	second := e.must(http.StatusOK, "POST", gen, map[string]any{"prompt": "Make it harder.", "previousMessages": previous}).Data(t)
	checkConversation(t, second["messages"], "Bookings for two.", "Make it harder.")
	reqs = e.model.generatorRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d generator requests", len(reqs))
	}
	var roles []string
	for _, m := range reqs[1].Messages {
		roles = append(roles, fmt.Sprint(m["role"]))
	}
	if want := []string{"system", "user", "assistant", "user"}; !slices.Equal(roles, want) {
		t.Errorf("refining request roles %v, want %v", roles, want)
	}
	// Nothing is saved: the user creates the cases they keep, as is.
	if items := e.must(http.StatusOK, "GET", "/v1/test-suites/"+s+"/test-cases", nil).List(t); len(items) != 0 {
		t.Errorf("generation saved cases: %v", items)
	}
	e.create("/v1/test-suites/"+s+"/test-cases", tests[0])
}

// checkConversation checks generation's messages: each prompt as a user
// message, each followed by the model's tests as the assistant's.
func checkConversation(t *testing.T, messages any, prompts ...string) {
	t.Helper()
	list, _ := messages.([]any)
	if len(list) != 2*len(prompts) {
		t.Fatalf("messages = %v, want %d", messages, 2*len(prompts))
	}
	var want any
	if err := json.Unmarshal([]byte(generatedTests), &want); err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		user, answer := list[2*i].(map[string]any), list[2*i+1].(map[string]any)
		var got any
		if err := json.Unmarshal([]byte(answer["content"].(string)), &got); err != nil || !jsonEqual(got, want) ||
			answer["role"] != "assistant" || user["role"] != "user" || user["content"] != p {
			t.Errorf("messages[%d:%d] = %v, %v", 2*i, 2*i+2, user, answer)
		}
	}
}

// Every test-suite route, driven with globex's key and acme's ids, answers
// 404 and changes nothing; lists never show acme's suites.
func TestTestSuiteTenantIsolation(t *testing.T) {
	for name, engine := range engines(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each store has an env of its own
			testSuiteTenantIsolation(t, newEnv(t, engine, withModel(false)))
		})
	}
}

func testSuiteTenantIsolation(t *testing.T, e *env) {
	agent := e.createAgent(nil)["id"].(string)
	suite := e.createSuite(agent)
	s := suite["id"].(string)
	c := e.createCase(s, map[string]any{"script": "Hello. " + scriptHang})
	run := e.must(http.StatusCreated, "POST", "/v1/test-suites/"+s+"/runs", map[string]any{"mode": "text"}).Data(t)
	waitHung(t, e)
	// What acme sees, but for the run's updatedAt, which lease renewals
	// may move.
	seen := func(path string) map[string]any {
		d := e.must(http.StatusOK, "GET", path, nil).Data(t)
		delete(d, "updatedAt")
		return d
	}
	before := map[string]map[string]any{}
	paths := []string{"/v1/test-suites/" + s, "/v1/test-suites/" + s + "/test-cases/" + c["id"].(string), "/v1/test-suites/" + s + "/runs/" + run["id"].(string)}
	for _, p := range paths {
		before[p] = seen(p)
	}

	bodies := map[string]any{
		"PATCH /v1/test-suites/{id}":                     map[string]any{"name": "stolen"},
		"POST /v1/test-suites/{id}/test-cases":           map[string]any{"name": "n", "script": "s", "scoringRubric": "r"},
		"PATCH /v1/test-suites/{id}/test-cases/{caseId}": map[string]any{"name": "stolen"},
		"POST /v1/test-suites/{id}/runs":                 map[string]any{"mode": "text"},
		"POST /v1/test-suites/{id}/generate-tests":       map[string]any{"prompt": "steal"},
	}
	checked := 0
	for _, rt := range e.server.routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		if !strings.HasPrefix(path, "/v1/test-suites/{id}") {
			continue
		}
		concrete := strings.NewReplacer("{id}", s, "{caseId}", c["id"].(string), "{runId}", run["id"].(string)).Replace(path)
		r := e.request(method, concrete, bodies[rt.pattern], e.otherKey)
		if r.Status != http.StatusNotFound || r.ErrorCode(t) != codeNotFound {
			t.Errorf("globex %s %s = %d %s, want 404", method, concrete, r.Status, r.Body)
		}
		checked++
	}
	if checked != 13 {
		t.Errorf("%d test-suite routes with ids checked, want 13", checked)
	}
	for _, p := range paths {
		if got := seen(p); !jsonEqual(got, before[p]) {
			t.Errorf("globex changed %s:\n%v\nnow\n%v", p, before[p], got)
		}
	}

	// Lists show globex nothing of acme's; acme's agent is no agentId for
	// globex.
	for _, path := range []string{"/v1/test-suites", "/v1/test-suites?agentId=" + agent} {
		r := e.request("GET", path, nil, e.otherKey)
		if r.Status != http.StatusOK || len(r.List(t)) != 0 || r.JSON(t)["total"] != 0.0 {
			t.Errorf("globex GET %s = %d %s", path, r.Status, r.Body)
		}
	}
	r := e.request("POST", "/v1/test-suites", map[string]any{"name": "G", "agentId": agent}, e.otherKey)
	if r.Status != http.StatusBadRequest || !slices.Equal(r.ErrorFields(t), []string{"agentId"}) {
		t.Errorf("globex suite for acme's agent = %d %s", r.Status, r.Body)
	}
	// Globex's own suite cannot reach acme's cases or runs through its id.
	gAgent := e.request("POST", "/v1/agents", map[string]any{"name": "G", "promptTemplate": "p"}, e.otherKey).Data(t)["id"].(string)
	g := e.request("POST", "/v1/test-suites", map[string]any{"name": "G", "agentId": gAgent}, e.otherKey).Data(t)["id"].(string)
	for _, p := range []string{"/v1/test-suites/" + g + "/test-cases/" + c["id"].(string), "/v1/test-suites/" + g + "/runs/" + run["id"].(string)} {
		if r := e.request("GET", p, nil, e.otherKey); r.Status != http.StatusNotFound {
			t.Errorf("globex GET %s = %d %s", p, r.Status, r.Body)
		}
	}
	if r := e.request("PATCH", "/v1/test-suites/"+g, map[string]any{"agentId": agent}, e.otherKey); r.Status != http.StatusBadRequest {
		t.Errorf("globex PATCH agentId to acme's agent = %d %s", r.Status, r.Body)
	}
	for _, p := range []string{"/v1/test-suites/" + g + "/test-cases", "/v1/test-suites/" + g + "/runs"} {
		if r := e.request("GET", p, nil, e.otherKey); r.Status != http.StatusOK || len(r.List(t)) != 0 {
			t.Errorf("globex GET %s = %d %s", p, r.Status, r.Body)
		}
	}
	// Within acme too, a case or run goes by its own suite only.
	other := e.createSuite(agent)["id"].(string)
	e.must(http.StatusNotFound, "GET", "/v1/test-suites/"+other+"/test-cases/"+c["id"].(string), nil)
	e.must(http.StatusNotFound, "GET", "/v1/test-suites/"+other+"/runs/"+run["id"].(string), nil)
	e.must(http.StatusNotFound, "POST", "/v1/test-suites/"+other+"/runs/"+run["id"].(string)+"/cancel", nil)
	e.must(http.StatusOK, "POST", "/v1/test-suites/"+s+"/runs/"+run["id"].(string)+"/cancel", nil)
}

// fullTestRun is a call-mode run with every optional field set: a judged
// attempt with both calls, one that failed without a verdict, one pending.
func fullTestRun() model.TestRun {
	now := time.Date(2025, 1, 31, 12, 0, 0, 0, time.UTC)
	s := func(v string) *string { return &v }
	yes, no := true, false
	caseID := model.NewID()
	reason := "the agent under test did not answer"
	return model.TestRun{
		ID: model.NewID(), SuiteID: model.NewID(), AgentID: model.NewID(), Name: "Nightly", Mode: model.TestModeCall,
		Status: model.TestRunCanceled, TotalTests: 3, PassedTests: 1, FailedTests: 1, ErrorMessage: s("canceled through the API"),
		CreatedAt: now, UpdatedAt: now, StartedAt: &now, CompletedAt: &now,
		Attempts: []model.TestAttempt{
			{ID: model.NewID(), TestCaseID: caseID, TestCaseName: "Books", AttemptNumber: 1, Status: model.AttemptPassed, Passed: &yes,
				CallID: s(model.NewID()), InboundCallID: s(model.NewID()), Reasoning: s("asked the time"),
				Transcript: []map[string]any{{"type": "message", "role": "assistant", "text": "Hi", "at": 0.5, "seq": 0}},
				CreatedAt:  now, StartedAt: &now, CompletedAt: &now},
			{ID: model.NewID(), TestCaseID: caseID, TestCaseName: "Books", AttemptNumber: 2, Status: model.AttemptFailed, Passed: nil,
				CallID: s(model.NewID()), Reasoning: &reason, ErrorMessage: &reason, CreatedAt: now, StartedAt: &now, CompletedAt: &now},
			{ID: model.NewID(), TestCaseID: model.NewID(), TestCaseName: "Cancels", AttemptNumber: 1, Status: model.AttemptFailed, Passed: &no,
				Reasoning: s("did not cancel"), CreatedAt: now, StartedAt: &now, CompletedAt: &now},
		},
	}
}

func TestContractAcceptsTestRunShapes(t *testing.T) {
	c := loadContract(t)
	run := fullTestRun()
	path := "/v1/test-suites/" + run.SuiteID + "/runs"
	page := func(data any) map[string]any {
		return map[string]any{"data": data, "page": 1, "pageSize": 25, "total": 1, "hasNextPage": false}
	}
	fresh := run
	fresh.Status, fresh.ErrorMessage, fresh.CompletedAt, fresh.Attempts = model.TestRunRunning, nil, nil, []model.TestAttempt{{
		ID: model.NewID(), TestCaseID: model.NewID(), TestCaseName: "Books", AttemptNumber: 1, Status: model.AttemptPending,
		Transcript: []map[string]any{}, CreatedAt: run.CreatedAt,
	}}
	for name, e := range map[string]exchange{
		"run":               {method: "GET", target: path + "/" + run.ID, status: 200, respBody: single{eval.NewRunRecord(run, true)}},
		"started":           {method: "POST", target: path, status: 201, respBody: single{eval.NewRunRecord(fresh, true)}},
		"started with body": {method: "POST", target: path, status: 201, reqBody: map[string]any{"mode": "call", "testCaseIds": []string{run.Attempts[0].TestCaseID}}, respBody: single{eval.NewRunRecord(fresh, true)}},
		"canceled":          {method: "POST", target: path + "/" + run.ID + "/cancel", status: 200, respBody: single{eval.NewRunRecord(run, true)}},
		"list":              {method: "GET", target: path, status: 200, respBody: page([]any{eval.NewRunRecord(run, false)})},
		"list with attempts": {method: "GET", target: path + "?includeAttempts=true", status: 200,
			respBody: page([]any{eval.NewRunRecord(run, true)})},
		"no model": {method: "POST", target: path, status: 503,
			respBody: map[string]any{"error": map[string]any{"code": "unavailable", "message": "m"}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, msg := range e.run(t, c) {
				t.Error(msg)
			}
		})
	}
	body, err := eval.CompletedBody(run)
	if err != nil {
		t.Fatal(err)
	}
	var payload any
	if err := json.Unmarshal(body, &payload); err != nil {
		t.Fatal(err)
	}
	if err := c.doc.Components.Schemas["TestRunCompletedPayload"].Value.VisitJSON(payload, formatOptions()...); err != nil {
		t.Errorf("test_run.completed body does not match the document: %v", err)
	}
}

func TestContractCatchesTestRunDrift(t *testing.T) {
	c := loadContract(t)
	run := fullTestRun()
	path := "/v1/test-suites/" + run.SuiteID + "/runs"
	edited := func(withAttempts bool, edit func(m map[string]any)) map[string]any {
		m := asMap(t, eval.NewRunRecord(run, withAttempts))
		edit(m)
		return map[string]any{"data": m}
	}
	for name, e := range map[string]exchange{
		"run without attempts": {method: "GET", target: path + "/" + run.ID, status: 200, respBody: single{eval.NewRunRecord(run, false)}},
		"attempts without case results": {method: "GET", target: path, status: 200, respBody: map[string]any{
			"data": []any{edited(true, func(m map[string]any) { delete(m, "caseResults") })["data"]}, "page": 1, "pageSize": 25, "total": 1, "hasNextPage": false}},
		"attempt without callId": {method: "GET", target: path + "/" + run.ID, status: 200, respBody: edited(true, func(m map[string]any) {
			delete(m["attempts"].([]any)[0].(map[string]any), "callId")
		})},
		"unknown attempt status": {method: "GET", target: path + "/" + run.ID, status: 200, respBody: edited(true, func(m map[string]any) {
			m["attempts"].([]any)[0].(map[string]any)["status"] = "skipped"
		})},
		"pass rate over 1": {method: "GET", target: path + "/" + run.ID, status: 200, respBody: edited(true, func(m map[string]any) {
			m["caseResults"].([]any)[0].(map[string]any)["passRate"] = 2
		})},
		"generation answering 201": {method: "POST", target: "/v1/test-suites/" + run.SuiteID + "/generate-tests", status: 201,
			reqBody: map[string]any{"prompt": "x"}, respBody: single{map[string]any{"tests": []any{}, "messages": []any{}}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if errs := e.run(t, c); len(errs) == 0 {
				t.Errorf("check reported nothing for %s", name)
			}
		})
	}
}
