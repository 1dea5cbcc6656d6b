package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/device"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// TestSuitePages is a user writing a test suite for an agent: the suite
// through its form, then a case, refused once beside its field, both
// listed; then a run's page on a phone.
func TestSuitePages(t *testing.T) {
	e := newEnv(t)
	ctx := tab(t)
	bg := context.Background()
	run(t, ctx, chromedp.EmulateViewport(1280, 900))
	orgID := signIn(t, e, ctx)
	a, err := e.svc.Agents.Create(bg, orgID, agent.Input{Name: opt.Value("Front desk"), PromptTemplate: opt.Value("You book tables at Bella Vista.")})
	if err != nil {
		t.Fatal(err)
	}

	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Test suites"]`),
		chromedp.WaitVisible(`//a[text()="New test suite"]`),
		chromedp.Click(`//a[text()="New test suite"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-name`)),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Bookings"),
		chromedp.SetValue(chromedp.CSS(`#f-agentId`), a.ID),
		chromedp.SendKeys(chromedp.CSS(`#f-description`), "Table bookings, busy evenings included."),
		chromedp.Submit(chromedp.CSS(`#f-name`)),
		chromedp.WaitVisible(`//h1[text()="Bookings"]`),
		chromedp.Click(`//a[text()="Add test case"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-script`)),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Party of four on Friday"),
		chromedp.SendKeys(chromedp.CSS(`#f-scoringRubric`), "The agent books a table for four on Friday at 7 pm and confirms it."),
		chromedp.SetValue(chromedp.CSS(`#f-attempts`), "3"),
		chromedp.Submit(chromedp.CSS(`#f-name`)),
		chromedp.WaitVisible(chromedp.CSS(`#script-error`)),
	)
	if msg := read(t, ctx, chromedp.Text(chromedp.CSS(`#script-error`))); !strings.Contains(msg, "is required") {
		t.Fatalf("script error = %q", msg)
	}
	run(t, ctx,
		chromedp.SendKeys(chromedp.CSS(`#f-script`), "You are a caller who wants a table for four on Friday at 7 pm."),
		chromedp.Submit(chromedp.CSS(`#f-name`)),
		chromedp.WaitVisible(`//p[@role="status" and text()="1 test case saved."]`),
		chromedp.WaitVisible(`//table//a[text()="Party of four on Friday"]`),
	)
	suites, _, err := e.svc.TestSuites.ListSuites(bg, orgID, store.TestSuiteFilter{Page: store.Page{Number: 1, Size: 10}})
	if err != nil || len(suites) != 1 || suites[0].AgentID != a.ID {
		t.Fatalf("suites after the form: %+v, %v", suites, err)
	}
	cases, _, err := e.svc.TestSuites.ListCases(bg, orgID, suites[0].ID, store.Page{Number: 1, Size: 10})
	if err != nil || len(cases) != 1 || cases[0].Attempts != 3 {
		t.Fatalf("cases after the form: %+v, %v", cases, err)
	}
	run(t, ctx, chromedp.ScrollIntoView(`//h1`))
	screenshot(t, ctx, "suite")

	run(t, ctx,
		chromedp.Click(`//nav//a[text()="Test suites"]`),
		chromedp.WaitVisible(`//table//a[text()="Bookings"]`),
		chromedp.WaitVisible(`//td[text()="Front desk"]`),
	)
	screenshot(t, ctx, "suites")

	// A finished run's page on a phone: how the case fared and the judge's
	// reasoning of each attempt.
	now := model.Now()
	pass, fail := true, false
	why := []string{"The agent offered Friday at 7 pm for four and confirmed the booking.", "The agent booked Friday but never repeated the time."}
	runRec := model.TestRun{ID: model.NewID(), OrgID: orgID, SuiteID: suites[0].ID, AgentID: a.ID, Name: "Nightly", Mode: model.TestModeText,
		Status: model.TestRunCompleted, CreatedAt: now, UpdatedAt: now, StartedAt: &now, CompletedAt: &now}
	for i, passed := range []*bool{&pass, &fail} {
		status := model.AttemptPassed
		if !*passed {
			status = model.AttemptFailed
		}
		runRec.Attempts = append(runRec.Attempts, model.TestAttempt{ID: model.NewID(), OrgID: orgID, TestCaseID: cases[0].ID, TestCaseName: cases[0].Name,
			AttemptNumber: i + 1, Script: cases[0].Script, ScoringRubric: cases[0].ScoringRubric, Status: status, Passed: passed, Reasoning: &why[i],
			Transcript: []map[string]any{{"role": "assistant", "type": "message", "text": "Bella Vista, how can I help?"}},
			CreatedAt:  now, UpdatedAt: now, StartedAt: &now, CompletedAt: &now})
	}
	runRec.TotalTests, runRec.PassedTests, runRec.FailedTests = 2, 1, 1
	if err := e.st.Update(bg, func(tx store.Tx) error { return tx.CreateTestRun(bg, &runRec) }); err != nil {
		t.Fatal(err)
	}
	run(t, ctx,
		chromedp.Emulate(device.IPhone13),
		chromedp.Navigate(e.url+"/suites/"+suites[0].ID),
		chromedp.Click(`//table//a[text()="Nightly"]`),
		chromedp.WaitVisible(`//h1[text()="Nightly"]`),
		chromedp.WaitVisible(`//span[text()="flaky"]`),
	)
	if text := read(t, ctx, chromedp.Text(chromedp.CSS(`.attempts`))); !strings.Contains(text, why[1]) {
		t.Fatalf("attempts show %q", text)
	}
	run(t, ctx, chromedp.ScrollIntoView(`//h2[text()="Attempts"]`))
	screenshot(t, ctx, "suite-run-phone")
	run(t, ctx, chromedp.EmulateReset())
}
