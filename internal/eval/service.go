package eval

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Service is the test-suite API's domain side: suites, cases, runs and
// generation. Runs are executed by the Runner, which StartRun wakes.
type Service struct {
	Store store.Store
	// Runner drives runs (nil: runs are stored and wait for a server that
	// drives them).
	Runner *Runner
	// Generator writes test cases (its LLM nil: generation is refused,
	// naming the setting).
	Generator Generator
}

// CreateSuite stores a new suite for an agent of the organization.
func (s *Service) CreateSuite(ctx context.Context, orgID string, in SuiteInput) (model.TestSuite, error) {
	if err := in.check(true).Err(); err != nil {
		return model.TestSuite{}, err
	}
	now := model.Now()
	ts := model.TestSuite{ID: model.NewID(), OrgID: orgID, CreatedAt: now, UpdatedAt: now}
	in.apply(&ts)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if err := agentExists(ctx, tx, orgID, ts.AgentID); err != nil {
			return err
		}
		return tx.CreateTestSuite(ctx, &ts)
	})
	return ts, err
}

// agentExists refuses an agentId that names no agent of the organization.
func agentExists(ctx context.Context, tx store.Tx, orgID, id string) error {
	_, err := tx.GetAgent(ctx, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return invalid.One("agentId", "names no agent in this organization")
	}
	return err
}

// GetSuite returns one suite.
func (s *Service) GetSuite(ctx context.Context, orgID, id string) (model.TestSuite, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.TestSuite, error) { return tx.GetTestSuite(ctx, orgID, id) })
}

// ListSuites returns a page of suites and their total count.
func (s *Service) ListSuites(ctx context.Context, orgID string, f store.TestSuiteFilter) ([]model.TestSuite, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.TestSuite, int, error) { return tx.ListTestSuites(ctx, orgID, f) })
}

// UpdateSuite applies a partial update.
func (s *Service) UpdateSuite(ctx context.Context, orgID, id string, in SuiteInput) (model.TestSuite, error) {
	if err := in.check(false).Err(); err != nil {
		return model.TestSuite{}, err
	}
	var ts model.TestSuite
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if ts, err = tx.GetTestSuite(ctx, orgID, id); err != nil {
			return err
		}
		if in.AgentID.Present() && in.AgentID.V != ts.AgentID {
			if err := agentExists(ctx, tx, orgID, in.AgentID.V); err != nil {
				return err
			}
		}
		in.apply(&ts)
		ts.UpdatedAt = model.Now()
		return tx.UpdateTestSuite(ctx, &ts)
	})
	return ts, err
}

// DeleteSuite removes a suite with its cases and runs. A suite with a run
// under way is a conflict: cancel the run first.
func (s *Service) DeleteSuite(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetTestSuite(ctx, orgID, id); err != nil {
			return err
		}
		n, err := tx.CountRunningTestRuns(ctx, orgID, id)
		if err != nil {
			return err
		}
		if n > 0 {
			return &invalid.Conflict{Message: "the test suite has a run in progress: cancel it first"}
		}
		return tx.DeleteTestSuite(ctx, orgID, id)
	})
}

// CreateCase adds a case to a suite.
func (s *Service) CreateCase(ctx context.Context, orgID, suiteID string, in CaseInput) (model.TestCase, error) {
	if err := in.check(true); err != nil {
		return model.TestCase{}, err
	}
	now := model.Now()
	c := model.TestCase{ID: model.NewID(), OrgID: orgID, SuiteID: suiteID, Attempts: 1, CreatedAt: now, UpdatedAt: now}
	in.apply(&c)
	err := s.addCases(ctx, orgID, suiteID, []model.TestCase{c}, func(int) string { return "a test suite holds at most 100 test cases" })
	return c, err
}

// addCases stores new cases in the organization's suite, in one
// transaction; a suite they would take past MaxCasesPerSuite refuses them
// all with full's message for the n cases it holds.
func (s *Service) addCases(ctx context.Context, orgID, suiteID string, cases []model.TestCase, full func(n int) string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetTestSuite(ctx, orgID, suiteID); err != nil {
			return err
		}
		_, n, err := tx.ListTestCases(ctx, orgID, suiteID, store.Page{Number: 1, Size: 1})
		if err != nil {
			return err
		}
		if n+len(cases) > MaxCasesPerSuite {
			return &invalid.Conflict{Message: full(n)}
		}
		for i := range cases {
			if err := tx.CreateTestCase(ctx, &cases[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// CreateCases adds several cases to a suite at once, such as the tests the
// generator wrote: all of them or, when one is refused, none. A refused
// case's fields are named under its place in the list ("cases[2].script").
// The cases keep the list's order: each is created a millisecond after
// the one before it.
func (s *Service) CreateCases(ctx context.Context, orgID, suiteID string, ins []CaseInput) ([]model.TestCase, error) {
	var l invalid.List
	if len(ins) == 0 {
		l.Add("cases", "must list at least one test case")
	}
	for i := range ins {
		var bad *invalid.Error
		err := ins[i].check(true)
		if err != nil && !errors.As(err, &bad) {
			return nil, err
		}
		if bad != nil {
			for _, f := range bad.Fields {
				l.Add(invalid.Join(invalid.Index("cases", i), f.Name), "%s", f.Message)
			}
		}
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	now := model.Now()
	out := make([]model.TestCase, len(ins))
	for i := range ins {
		at := now.Add(time.Duration(i) * time.Millisecond)
		out[i] = model.TestCase{ID: model.NewID(), OrgID: orgID, SuiteID: suiteID, Attempts: 1, CreatedAt: at, UpdatedAt: at}
		ins[i].apply(&out[i])
	}
	err := s.addCases(ctx, orgID, suiteID, out, func(n int) string {
		return fmt.Sprintf("a test suite holds at most %d test cases and this one has %d", MaxCasesPerSuite, n)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetCase returns one case of a suite.
func (s *Service) GetCase(ctx context.Context, orgID, suiteID, id string) (model.TestCase, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.TestCase, error) { return tx.GetTestCase(ctx, orgID, suiteID, id) })
}

// ListCases returns a page of a suite's cases, oldest first by default.
func (s *Service) ListCases(ctx context.Context, orgID, suiteID string, p store.Page) ([]model.TestCase, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.TestCase, int, error) {
		if _, err := tx.GetTestSuite(ctx, orgID, suiteID); err != nil {
			return nil, 0, err
		}
		return tx.ListTestCases(ctx, orgID, suiteID, p)
	})
}

// UpdateCase applies a partial update. Runs under way keep the case as it
// was when they started.
func (s *Service) UpdateCase(ctx context.Context, orgID, suiteID, id string, in CaseInput) (model.TestCase, error) {
	if err := in.check(false); err != nil {
		return model.TestCase{}, err
	}
	var c model.TestCase
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if c, err = tx.GetTestCase(ctx, orgID, suiteID, id); err != nil {
			return err
		}
		in.apply(&c)
		c.UpdatedAt = model.Now()
		return tx.UpdateTestCase(ctx, &c)
	})
	return c, err
}

// DeleteCase removes a case; runs keep their attempts of it.
func (s *Service) DeleteCase(ctx context.Context, orgID, suiteID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteTestCase(ctx, orgID, suiteID, id) })
}
