package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// StartRun snapshots the suite's cases (or the ones named) into attempts
// and hands the run to the runner. What would make every attempt fail
// (no cases, the agent gone or disabled, no model to judge, call mode
// without telephony or without two lines) is refused before anything is
// stored.
func (s *Service) StartRun(ctx context.Context, orgID, suiteID string, in RunInput) (model.TestRun, error) {
	if err := in.check(); err != nil {
		return model.TestRun{}, err
	}
	mode := model.TestModeCall
	if in.Mode.Present() {
		mode = in.Mode.V
	}
	now := model.Now()
	r := model.TestRun{ID: model.NewID(), OrgID: orgID, SuiteID: suiteID, Mode: mode, Status: model.TestRunRunning,
		CreatedAt: now, UpdatedAt: now, StartedAt: &now}
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		suite, err := tx.GetTestSuite(ctx, orgID, suiteID)
		if err != nil {
			return err
		}
		// After the suite: another organization's suite id is not found
		// whatever this server can run.
		if err := s.Runner.canRun(mode); err != nil {
			return err
		}
		r.AgentID = suite.AgentID
		r.Name = truncate("Run of "+suite.Name, MaxNameLen)
		if in.Name.Present() {
			r.Name = in.Name.V
		}
		if err := runnable(ctx, tx, suite, mode); err != nil {
			return err
		}
		cases, _, err := tx.ListTestCases(ctx, orgID, suiteID, store.Page{})
		if err != nil {
			return err
		}
		if cases, err = chosen(cases, in); err != nil {
			return err
		}
		for _, c := range cases {
			for n := 1; n <= c.Attempts; n++ {
				r.Attempts = append(r.Attempts, model.TestAttempt{
					ID: model.NewID(), OrgID: orgID, RunID: r.ID, TestCaseID: c.ID, TestCaseName: c.Name,
					AttemptNumber: n, Script: c.Script, ScoringRubric: c.ScoringRubric, Variables: c.Variables,
					Status: model.AttemptPending, Transcript: []map[string]any{}, CreatedAt: now, UpdatedAt: now,
				})
			}
		}
		counts(&r)
		s.Runner.claim(&r, now)
		return tx.CreateTestRun(ctx, &r)
	})
	if err != nil {
		return model.TestRun{}, err
	}
	s.Runner.logStarted(r)
	s.Runner.Wake()
	return r, nil
}

// runnable refuses a run whose attempts could only fail.
func runnable(ctx context.Context, tx store.Tx, suite model.TestSuite, mode string) error {
	a, err := tx.GetAgent(ctx, suite.OrgID, suite.AgentID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &invalid.Conflict{Message: "the test suite's agent was deleted: point the suite at another agent"}
	case err != nil:
		return err
	case a.Status != model.AgentActive:
		return &invalid.Conflict{Message: "the test suite's agent is disabled"}
	}
	if mode != model.TestModeCall {
		return nil
	}
	o, err := tx.GetOrg(ctx, suite.OrgID)
	if err != nil {
		return err
	}
	if o.ConcurrencyLimit < 2 {
		return &invalid.Conflict{Message: fmt.Sprintf(
			"a call-mode attempt holds two lines (the simulated caller's and the agent's) and the organization's concurrencyLimit is %d: raise it or use mode text",
			o.ConcurrencyLimit)}
	}
	return nil
}

// chosen is the cases a run covers: every case of the suite, or the ones
// testCaseIds names (each must be a case of the suite), in suite order.
func chosen(cases []model.TestCase, in RunInput) ([]model.TestCase, error) {
	if len(cases) == 0 {
		return nil, &invalid.Conflict{Message: "the test suite has no test cases"}
	}
	if !in.TestCaseIDs.Present() {
		return cases, nil
	}
	var l invalid.List
	for i, id := range in.TestCaseIDs.V {
		if !slices.ContainsFunc(cases, func(c model.TestCase) bool { return c.ID == id }) {
			l.Add(invalid.Index("testCaseIds", i), "names no test case of this suite")
		}
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(cases, func(c model.TestCase) bool { return !slices.Contains(in.TestCaseIDs.V, c.ID) }), nil
}

// GetRun returns a run of the suite with its attempts.
func (s *Service) GetRun(ctx context.Context, orgID, suiteID, id string) (model.TestRun, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.TestRun, error) {
		return tx.GetTestRun(ctx, orgID, suiteID, id, true)
	})
}

// ListRuns returns a page of the suite's runs and their total count.
func (s *Service) ListRuns(ctx context.Context, orgID, suiteID string, f store.TestRunFilter) ([]model.TestRun, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.TestRun, int, error) {
		if _, err := tx.GetTestSuite(ctx, orgID, suiteID); err != nil {
			return nil, 0, err
		}
		return tx.ListTestRuns(ctx, orgID, suiteID, f)
	})
}

// CancelRun stops a run: its unfinished attempts end failed with the
// reason, their calls are hung up (or taken out of the queue), and
// test_run.completed goes out. A run already over is a conflict.
func (s *Service) CancelRun(ctx context.Context, orgID, suiteID, id string) (model.TestRun, error) {
	var (
		r   model.TestRun
		cut []model.TestAttempt
	)
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if _, err = tx.GetTestRun(ctx, orgID, suiteID, id, false); err != nil {
			return err
		}
		if r, err = tx.GetTestRunForUpdate(ctx, orgID, id); err != nil {
			return err
		}
		if r.Status != model.TestRunRunning {
			return &invalid.Conflict{Message: "the test run has already ended (" + r.Status + ")"}
		}
		now := model.Now()
		for i := range r.Attempts {
			a := &r.Attempts[i]
			if a.Final() {
				continue
			}
			fail(a, "the run was canceled", now)
			if err := tx.UpdateTestAttempt(ctx, a); err != nil {
				return err
			}
			cut = append(cut, *a)
		}
		return s.Runner.end(ctx, tx, &r, model.TestRunCanceled, "canceled through the API", now)
	})
	if err != nil {
		return model.TestRun{}, err
	}
	s.Runner.logFinished(r)
	s.Runner.hangUp(ctx, cut)
	s.Runner.deliver(r)
	s.Runner.Wake()
	return r, nil
}

// fail ends an attempt failed without a verdict.
func fail(a *model.TestAttempt, reason string, now time.Time) {
	a.Status, a.ErrorMessage, a.Reasoning = model.AttemptFailed, &reason, &reason
	a.CompletedAt, a.UpdatedAt = &now, now
	if a.StartedAt == nil {
		a.StartedAt = &now
	}
}

// truncate cuts s to at most n characters.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
