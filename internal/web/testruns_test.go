package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/pipeline"
	"github.com/parley-voice/parley/internal/store"
)

// newRun stores a running run of the suite's case: a passed attempt with
// its calls, a failed one, and one still waiting, as a runner would
// leave them mid-run.
func (e *env) newRun(ts model.TestSuite, c model.TestCase, callID, inboundID string) model.TestRun {
	e.t.Helper()
	now := model.Now()
	pass, fail := true, false
	reasonPass, reasonFail := "The agent confirmed a table for four at 7 pm.", "The agent never confirmed the time."
	started := now.Add(-time.Minute)
	attempt := func(n int, status string, passed *bool, reasoning *string) model.TestAttempt {
		a := model.TestAttempt{ID: model.NewID(), OrgID: ts.OrgID, TestCaseID: c.ID, TestCaseName: c.Name, AttemptNumber: n,
			Script: c.Script, ScoringRubric: c.ScoringRubric, Status: status, Passed: passed, Reasoning: reasoning,
			Transcript: []map[string]any{}, CreatedAt: now, UpdatedAt: now}
		if status != model.AttemptPending {
			a.StartedAt, a.CompletedAt = &started, &now
		}
		return a
	}
	first := attempt(1, model.AttemptPassed, &pass, &reasonPass)
	first.CallID, first.InboundCallID = &callID, &inboundID
	first.Transcript = []map[string]any{
		{"role": "assistant", "type": "message", "text": "Bella Vista, how can I help?"},
		{"role": "user", "type": "message", "text": "A table for four at seven, please."},
	}
	r := model.TestRun{ID: model.NewID(), OrgID: ts.OrgID, SuiteID: ts.ID, AgentID: ts.AgentID, Name: "Nightly", Mode: model.TestModeCall,
		Status: model.TestRunRunning, TotalTests: 3, PassedTests: 1, FailedTests: 1, CreatedAt: now, UpdatedAt: now, StartedAt: &started,
		Attempts: []model.TestAttempt{first, attempt(2, model.AttemptFailed, &fail, &reasonFail), attempt(3, model.AttemptPending, nil, nil)}}
	ctx := context.Background()
	if err := e.st.Update(ctx, func(tx store.Tx) error { return tx.CreateTestRun(ctx, &r) }); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// TestRunPage: a run shows how its case fared, every attempt's verdict,
// reasoning, transcript and calls; it polls while running, can be
// canceled once, and then stops polling.
func TestRunPage(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Front desk")
	ts, c := e.newSuite(u.OrgID, a.ID, "Bookings")
	callID, inboundID := model.NewID(), model.NewID()
	run := e.newRun(ts, c, callID, inboundID)
	path := "/suites/" + ts.ID + "/runs/" + run.ID

	wantContains(t, b.get("/suites/"+ts.ID), `href="`+path+`">Nightly</a>`, "1 run")
	p := b.get(path)
	wantStatus(t, p, http.StatusOK)
	wantContains(t, p, "<h1>Nightly</h1>", "Cancel run", `hx-get="`+path+`/live"`, `id="run-status">running`,
		"1 of 3", `<span class="badge flaky">flaky</span>`, "50%",
		"Bookings case, attempt 1", ">passed<", "The agent confirmed a table for four at 7 pm.",
		"Bookings case, attempt 2", ">failed<", "The agent never confirmed the time.",
		"Bookings case, attempt 3", ">waiting<",
		`href="/calls/`+callID+`">the simulated caller's call</a>`, `href="/calls/`+inboundID+`">the agent's call</a>`,
		"Transcript (2 lines)", "A table for four at seven, please.")

	p = b.get(path + "/live")
	wantStatus(t, p, http.StatusOK)
	if p.header.Get("HX-Refresh") != "" || contains(p.body, "<html") || !contains(p.body, `id="run-progress"`) {
		t.Fatalf("live partial of a running run: refresh %q\n%s", p.header.Get("HX-Refresh"), p.body)
	}

	if p := b.post(path+"/cancel", nil); p.location() != path {
		t.Fatalf("cancel: %d to %q\n%s", p.status, p.location(), p.body)
	}
	got, err := e.svc.TestSuites.GetRun(context.Background(), u.OrgID, ts.ID, run.ID)
	if err != nil || got.Status != model.TestRunCanceled || got.Attempts[2].Status != model.AttemptFailed {
		t.Fatalf("after the cancel: %+v, %v", got, err)
	}
	p = b.get(path)
	wantContains(t, p, `id="run-status">canceled`, "canceled through the API", "Why it failed", "the run was canceled")
	if contains(p.body, "Cancel run") || contains(p.body, `hx-get="`+path+`/live"`) {
		t.Fatal("an ended run can still be canceled or polls")
	}
	if p := b.get(path + "/live"); p.header.Get("HX-Refresh") != "true" {
		t.Fatalf("live partial of an ended run: refresh %q", p.header.Get("HX-Refresh"))
	}
	p = b.post(path+"/cancel", url.Values{})
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "already ended")
}

// idleChats is a conversation engine no test run reaches: the runner is
// not driven, so started runs wait.
type idleChats struct{ t *testing.T }

func (c idleChats) Chat(context.Context, pipeline.Chat) (pipeline.ChatResult, error) {
	c.t.Error("a text conversation was held")
	return pipeline.ChatResult{}, context.Canceled
}

// TestStartRun: the run form starts a run of the ticked cases and opens
// its page, which waits on its attempts; a mode this server cannot run is
// refused with why, and a suite with a run under way cannot be deleted.
func TestStartRun(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	a := e.newAgentIn(u.OrgID, "Front desk")
	ts, c := e.newSuite(u.OrgID, a.ID, "Bookings")
	other, err := e.svc.TestSuites.CreateCase(context.Background(), u.OrgID, ts.ID, eval.CaseInput{Name: opt.Value("Not run"),
		Script: opt.Value("You cancel."), ScoringRubric: opt.Value("It cancels.")})
	if err != nil {
		t.Fatal(err)
	}
	client, _ := newFakeModel(t) // the judge, never asked: the runner is not driven
	e.svc.TestSuites.Runner.Judge = eval.Judge{LLM: client}
	e.svc.TestSuites.Runner.Chats = idleChats{t}
	base := "/suites/" + ts.ID

	p := b.post(base+"/runs", url.Values{"mode": {"call"}})
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, `id="run-error"`, "no telephony", "use mode text")

	p = b.post(base+"/runs", url.Values{"name": {"Quick check"}, "mode": {"text"}, "testCaseIds": {c.ID}})
	wantStatus(t, p, http.StatusSeeOther)
	runs, _, err := e.svc.TestSuites.ListRuns(context.Background(), u.OrgID, ts.ID, store.TestRunFilter{Page: store.Page{Number: 1, Size: 10}, WithAttempts: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %+v, %v", runs, err)
	}
	run := runs[0]
	if p.location() != base+"/runs/"+run.ID || run.Name != "Quick check" || run.Mode != model.TestModeText || len(run.Attempts) != c.Attempts {
		t.Fatalf("started %+v at %q", run, p.location())
	}
	for _, at := range run.Attempts {
		if at.TestCaseID != c.ID {
			t.Fatalf("an attempt of %s, which was not ticked (%s)", at.TestCaseID, other.ID)
		}
	}
	p = b.get(p.location())
	wantContains(t, p, "<h1>Quick check</h1>", "Cancel run", `hx-get="`+base+"/runs/"+run.ID+`/live"`, "Bookings case, attempt 2", ">waiting<")

	p = b.post(base+"/delete", nil)
	wantStatus(t, p, http.StatusConflict)
	wantContains(t, p, "cancel it first")
	if n := e.suiteCount(u.OrgID); n != 1 {
		t.Fatalf("%d suites after a refused delete", n)
	}
}
