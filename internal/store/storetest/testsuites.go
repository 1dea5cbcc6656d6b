package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Test suites and their cases.
var testSuiteTests = []test{
	{"SuiteCRUD", func(t *testing.T, b *bundle) {
		agent := newAgent(t, b, b.org.ID)
		s := newTestSuite(t, b, b.org.ID, agent.ID, func(s *model.TestSuite) {
			s.Description = ptr("Checks the greeting — ünïcødé")
			s.CreatedAt, s.UpdatedAt = offset(1), offset(2)
		})
		wantEqual(t, at(1).Add(time.Millisecond), s.CreatedAt) // as stored: UTC, milliseconds
		wantEqual(t, s, getTestSuite(t, b, b.org.ID, s.ID))

		s.Name, s.Description, s.AgentID, s.UpdatedAt = "Renamed", nil, model.NewID(), at(9)
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestSuite(b.ctx, &s) })
		wantEqual(t, s, getTestSuite(t, b, b.org.ID, s.ID))

		b.update(t, func(tx store.Tx) error { return tx.DeleteTestSuite(b.ctx, b.org.ID, s.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.TestSuite, error) { return tx.GetTestSuite(b.ctx, b.org.ID, s.ID) }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteTestSuite(b.ctx, b.org.ID, s.ID) }), store.ErrNotFound)
	}},
	{"SuiteScoped", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		for _, k := range []struct{ org, id string }{
			{b.other.ID, s.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"}, {"not-a-uuid", s.ID},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.TestSuite, error) { return tx.GetTestSuite(b.ctx, k.org, k.id) }), store.ErrNotFound)
			u := s
			u.OrgID, u.ID, u.Name = k.org, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateTestSuite(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteTestSuite(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, s, getTestSuite(t, b, b.org.ID, s.ID))

		// An organization that does not exist, an agent id that names none.
		for _, bad := range []model.TestSuite{
			{OrgID: model.NewID(), AgentID: model.NewID(), Name: "x"},
			{OrgID: b.org.ID, AgentID: "not-a-uuid", Name: "x"},
		} {
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateTestSuite(b.ctx, &bad) }), store.ErrNotFound)
		}
		u := s
		u.AgentID = "not-a-uuid"
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateTestSuite(b.ctx, &u) }), store.ErrNotFound)
		// The same id twice.
		dup := s
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateTestSuite(b.ctx, &dup) }), store.ErrConflict)
	}},
	{"SuiteList", func(t *testing.T, b *bundle) {
		agent, otherAgent := model.NewID(), model.NewID()
		var all, ofAgent []created
		for i, sec := range []int{3, 1, 2, 2, 5} { // a tie at 2: broken by id
			a := agent
			if i%2 == 1 {
				a = otherAgent
			}
			s := newTestSuite(t, b, b.org.ID, a, func(s *model.TestSuite) { s.CreatedAt = at(sec) })
			all = append(all, created{s.ID, s.CreatedAt})
			if a == agent {
				ofAgent = append(ofAgent, created{s.ID, s.CreatedAt})
			}
		}
		newTestSuite(t, b, b.other.ID, agent)
		listed := func(agentID string) func(store.Page) ([]string, int) {
			return func(p store.Page) ([]string, int) {
				var total int
				got := read(t, b, func(tx store.Tx) ([]model.TestSuite, error) {
					rows, n, err := tx.ListTestSuites(b.ctx, b.org.ID, store.TestSuiteFilter{Page: p, AgentID: agentID})
					total = n
					return rows, err
				})
				return ids(got, func(s model.TestSuite) string { return s.ID }), total
			}
		}
		checkPaging(t, oldestFirst(all), listed(""))
		checkPaging(t, oldestFirst(ofAgent), listed(agent))
		checkPaging(t, nil, listed(model.NewID()))
		checkPaging(t, nil, listed("not-a-uuid"))

		// Query: a case-insensitive substring of the name, % and _ literal.
		named := func(name string, sec int) string {
			return newTestSuite(t, b, b.org.ID, agent, func(s *model.TestSuite) { s.Name, s.CreatedAt = name, at(sec) }).ID
		}
		refunds, percent := named("Refunds and Returns", 10), named("100% refunds_only", 11)
		named("Greeting", 12)
		searched := func(q string) []string {
			return ids(read(t, b, func(tx store.Tx) ([]model.TestSuite, error) {
				rows, _, err := tx.ListTestSuites(b.ctx, b.org.ID, store.TestSuiteFilter{Page: store.Page{Number: 1, Size: 10, SortDir: store.Asc}, Query: q})
				return rows, err
			}), func(s model.TestSuite) string { return s.ID })
		}
		wantEqual(t, []string{refunds, percent}, searched("REFUND"))
		wantEqual(t, []string{percent}, searched("0%"))
		wantEqual(t, []string{percent}, searched("s_o"))
		wantEqual(t, []string{percent}, searched("%"))

		// Whole suites, as GetTestSuite reads them.
		page := read(t, b, func(tx store.Tx) ([]model.TestSuite, error) {
			rows, _, err := tx.ListTestSuites(b.ctx, b.org.ID, store.TestSuiteFilter{Page: store.Page{Number: 1, Size: 10}})
			return rows, err
		})
		for _, s := range page {
			wantEqual(t, getTestSuite(t, b, b.org.ID, s.ID), s)
		}
	}},
	{"CaseCRUD", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID, func(c *model.TestCase) { c.CreatedAt, c.UpdatedAt = offset(1), offset(2) })
		wantEqual(t, c, getTestCase(t, b, b.org.ID, s.ID, c.ID))

		c.Name, c.Script, c.ScoringRubric, c.Attempts, c.UpdatedAt = "Refund", "Ask for a refund.", "Offers one.", 5, at(8)
		c.Variables = map[string]any{"order": "A-17", "total": 12.5, "items": []any{"x", 2.0}, "gift": false, "note": nil}
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestCase(b.ctx, &c) })
		wantEqual(t, c, getTestCase(t, b, b.org.ID, s.ID, c.ID))

		// No variables are stored, and read back, as an empty document.
		c.Variables = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestCase(b.ctx, &c) })
		wantEqual(t, map[string]any{}, c.Variables)
		wantEqual(t, c, getTestCase(t, b, b.org.ID, s.ID, c.ID))
		bare := newTestCase(t, b, b.org.ID, s.ID, func(c *model.TestCase) { c.Variables = nil })
		wantEqual(t, map[string]any{}, getTestCase(t, b, b.org.ID, s.ID, bare.ID).Variables)

		b.update(t, func(tx store.Tx) error { return tx.DeleteTestCase(b.ctx, b.org.ID, s.ID, c.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.TestCase, error) { return tx.GetTestCase(b.ctx, b.org.ID, s.ID, c.ID) }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteTestCase(b.ctx, b.org.ID, s.ID, c.ID) }), store.ErrNotFound)
		wantEqual(t, bare, getTestCase(t, b, b.org.ID, s.ID, bare.ID))
	}},
	{"CaseScoped", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		sibling := newTestSuite(t, b, b.org.ID, model.NewID())
		theirs := newTestSuite(t, b, b.other.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID)
		for _, k := range []struct{ org, suite, id string }{
			{b.other.ID, s.ID, c.ID}, {b.org.ID, sibling.ID, c.ID}, {b.other.ID, theirs.ID, c.ID},
			{b.org.ID, s.ID, model.NewID()}, {b.org.ID, s.ID, "not-a-uuid"}, {b.org.ID, "not-a-uuid", c.ID},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.TestCase, error) { return tx.GetTestCase(b.ctx, k.org, k.suite, k.id) }), store.ErrNotFound)
			u := c
			u.OrgID, u.SuiteID, u.ID, u.Name = k.org, k.suite, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateTestCase(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteTestCase(b.ctx, k.org, k.suite, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, c, getTestCase(t, b, b.org.ID, s.ID, c.ID))
		rows := read(t, b, func(tx store.Tx) ([]model.TestCase, error) {
			rows, _, err := tx.ListTestCases(b.ctx, b.other.ID, s.ID, store.Page{})
			return rows, err
		})
		wantEqual(t, []model.TestCase{}, rows)

		// A case can only go into a suite of its own organization.
		for _, suite := range []string{theirs.ID, model.NewID(), "not-a-uuid"} {
			bad := model.TestCase{OrgID: b.org.ID, SuiteID: suite, Name: "x", Attempts: 1}
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateTestCase(b.ctx, &bad) }), store.ErrNotFound)
		}
		dup := c
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateTestCase(b.ctx, &dup) }), store.ErrConflict)
	}},
	{"CaseList", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		sibling := newTestSuite(t, b, b.org.ID, model.NewID())
		var rows []created
		for _, sec := range []int{3, 1, 2, 2, 5} {
			c := newTestCase(t, b, b.org.ID, s.ID, func(c *model.TestCase) { c.CreatedAt = at(sec) })
			rows = append(rows, created{c.ID, c.CreatedAt})
		}
		newTestCase(t, b, b.org.ID, sibling.ID)
		list := func(suiteID string) func(store.Page) ([]string, int) {
			return func(p store.Page) ([]string, int) {
				var total int
				got := read(t, b, func(tx store.Tx) ([]model.TestCase, error) {
					rows, n, err := tx.ListTestCases(b.ctx, b.org.ID, suiteID, p)
					total = n
					return rows, err
				})
				return ids(got, func(c model.TestCase) string { return c.ID }), total
			}
		}
		// Oldest first unless asked otherwise; no size is every case.
		checkPagingFrom(t, store.Asc, oldestFirst(rows), list(s.ID))
		got, total := list(s.ID)(store.Page{})
		wantEqual(t, oldestFirst(rows), got)
		wantEqual(t, len(rows), total)
		checkPagingFrom(t, store.Asc, nil, list(model.NewID()))

		whole := read(t, b, func(tx store.Tx) ([]model.TestCase, error) {
			rows, _, err := tx.ListTestCases(b.ctx, b.org.ID, sibling.ID, store.Page{})
			return rows, err
		})
		wantEqual(t, 1, len(whole))
		wantEqual(t, getTestCase(t, b, b.org.ID, sibling.ID, whole[0].ID), whole[0])
	}},
}

// Test runs and their attempts.
var testRunTests = []test{
	{"RunCRUD", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		c1, c2 := newTestCase(t, b, b.org.ID, s.ID), newTestCase(t, b, b.org.ID, s.ID)
		// The attempts go in interleaved; they read back in case order
		// (the order the cases first appear), then attempt number.
		r := fullTestRun(b.org.ID, s.ID, s.AgentID)
		r.Attempts = []model.TestAttempt{
			fullTestAttempt(c1, 2), newTestAttempt(c2, 1), newTestAttempt(c1, 1), fullTestAttempt(c2, 2),
		}
		r.Attempts[1].ID = model.NewID() // a given id is kept
		given := r.Attempts[1].ID
		b.update(t, func(tx store.Tx) error { return tx.CreateTestRun(b.ctx, &r) })
		wantEqual(t, given, r.Attempts[1].ID)
		for _, a := range r.Attempts {
			if a.OrgID != b.org.ID || a.RunID != r.ID || !model.IsUUID(a.ID) || a.CreatedAt.IsZero() {
				t.Fatalf("attempt as created: %+v", a)
			}
		}
		want := r
		want.Attempts = []model.TestAttempt{r.Attempts[2], r.Attempts[0], r.Attempts[1], r.Attempts[3]}

		got := getTestRun(t, b, b.org.ID, s.ID, r.ID, true)
		wantEqual(t, want, got)
		bare := want
		bare.Attempts = nil
		wantEqual(t, bare, getTestRun(t, b, b.org.ID, s.ID, r.ID, false))
		for _, inWrite := range []bool{true, false} {
			var got model.TestRun
			fn := func(tx store.Tx) (err error) { got, err = tx.GetTestRunForUpdate(b.ctx, b.org.ID, r.ID); return }
			if inWrite {
				b.update(t, fn)
			} else if err := b.view(fn); err != nil {
				t.Fatal(err)
			}
			wantEqual(t, want, got)
		}

		// Every field of the run, to nothing and back; its attempts are
		// not written.
		cleared := want
		cleared.AgentID, cleared.Name, cleared.Mode, cleared.Status = model.NewID(), "Run 2", model.TestModeCall, model.TestRunRunning
		cleared.TotalTests, cleared.PassedTests, cleared.FailedTests = 0, 0, 0
		cleared.ErrorMessage, cleared.WebhookURL, cleared.WebhookStatus = nil, nil, nil
		cleared.LeaseOwner, cleared.LeaseExpiresAt, cleared.StartedAt, cleared.CompletedAt = nil, nil, nil, nil
		cleared.UpdatedAt = at(40)
		cleared.Attempts = nil
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestRun(b.ctx, &cleared) })
		cleared.Attempts = want.Attempts
		wantEqual(t, cleared, getTestRun(t, b, b.org.ID, s.ID, r.ID, true))
		full := fullTestRun(b.org.ID, s.ID, s.AgentID)
		full.ID, full.CreatedAt = r.ID, r.CreatedAt
		full.Attempts = []model.TestAttempt{newTestAttempt(c1, 9)}
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestRun(b.ctx, &full) })
		full.Attempts = want.Attempts
		wantEqual(t, full, getTestRun(t, b, b.org.ID, s.ID, r.ID, true))

		// Every field of an attempt, to nothing and back.
		a := want.Attempts[1] // c1's second, the full one
		a.TestCaseName, a.AttemptNumber, a.Script, a.ScoringRubric = "Renamed", 7, "New script", "New rubric"
		a.Variables, a.Transcript, a.Status = nil, nil, model.AttemptPending
		a.Passed, a.CallerAgentID, a.CallID, a.InboundCallID = nil, nil, nil, nil
		a.Reasoning, a.ErrorMessage, a.StartedAt, a.CompletedAt = nil, nil, nil, nil
		a.UpdatedAt = at(50)
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestAttempt(b.ctx, &a) })
		wantEqual(t, map[string]any{}, a.Variables)
		wantEqual(t, []map[string]any{}, a.Transcript)
		// Still c1's second: an attempt keeps its case's place.
		wantEqual(t, []model.TestAttempt{want.Attempts[0], a, want.Attempts[2], want.Attempts[3]},
			getTestRun(t, b, b.org.ID, s.ID, r.ID, true).Attempts)

		f := fullTestAttempt(c1, 1)
		f.ID, f.OrgID, f.RunID, f.CreatedAt = want.Attempts[0].ID, b.org.ID, r.ID, want.Attempts[0].CreatedAt
		f.Passed = ptr(false)
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestAttempt(b.ctx, &f) })
		wantEqual(t, f, getTestRun(t, b, b.org.ID, s.ID, r.ID, true).Attempts[0])
	}},
	{"RunScoped", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		sibling := newTestSuite(t, b, b.org.ID, model.NewID())
		theirs := newTestSuite(t, b, b.other.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID)
		r := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, func(r *model.TestRun) {
			r.Attempts = []model.TestAttempt{newTestAttempt(c, 1)}
		})
		newTestRun(t, b, b.other.ID, theirs.ID, theirs.AgentID)
		for _, k := range []struct{ org, suite, id string }{
			{b.other.ID, s.ID, r.ID}, {b.org.ID, sibling.ID, r.ID}, {b.other.ID, theirs.ID, r.ID},
			{b.org.ID, s.ID, model.NewID()}, {b.org.ID, s.ID, "not-a-uuid"}, {"not-a-uuid", s.ID, r.ID},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.TestRun, error) {
				return tx.GetTestRun(b.ctx, k.org, k.suite, k.id, true)
			}), store.ErrNotFound)
			if k.suite != s.ID {
				continue // the rest do not take the suite
			}
			wantIs(t, b.writeErr(func(tx store.Tx) error {
				_, err := tx.GetTestRunForUpdate(b.ctx, k.org, k.id)
				return err
			}), store.ErrNotFound)
			u := r
			u.OrgID, u.ID, u.Name = k.org, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateTestRun(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.SetTestRunWebhookStatus(b.ctx, k.org, k.id, model.WebhookSent) }), store.ErrNotFound)
		}
		for _, k := range []struct{ org, run, id string }{
			{b.other.ID, r.ID, r.Attempts[0].ID}, {b.org.ID, model.NewID(), r.Attempts[0].ID},
			{b.org.ID, r.ID, model.NewID()}, {b.org.ID, r.ID, "not-a-uuid"},
		} {
			a := r.Attempts[0]
			a.OrgID, a.RunID, a.ID, a.Reasoning = k.org, k.run, k.id, ptr("hijacked")
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateTestAttempt(b.ctx, &a) }), store.ErrNotFound)
		}
		wantEqual(t, r, getTestRun(t, b, b.org.ID, s.ID, r.ID, true))
		runs := read(t, b, func(tx store.Tx) ([]model.TestRun, error) {
			rows, _, err := tx.ListTestRuns(b.ctx, b.other.ID, s.ID, store.TestRunFilter{WithAttempts: true})
			return rows, err
		})
		wantEqual(t, []model.TestRun{}, runs)
		wantEqual(t, 0, read(t, b, func(tx store.Tx) (int, error) { return tx.CountRunningTestRuns(b.ctx, b.other.ID, s.ID) }))

		// A run can only go into a suite of its own organization, and ids
		// that are not UUIDs name nothing.
		for _, mod := range []func(*model.TestRun){
			func(r *model.TestRun) { r.SuiteID = theirs.ID },
			func(r *model.TestRun) { r.SuiteID = model.NewID() },
			func(r *model.TestRun) { r.AgentID = "not-a-uuid" },
			func(r *model.TestRun) { r.Attempts[0].CallID = ptr("not-a-uuid") },
			func(r *model.TestRun) { r.Attempts[0].TestCaseID = "not-a-uuid" },
		} {
			bad := model.TestRun{OrgID: b.org.ID, SuiteID: s.ID, AgentID: s.AgentID, Mode: model.TestModeText,
				Status: model.TestRunRunning, Attempts: []model.TestAttempt{newTestAttempt(c, 1)}}
			mod(&bad)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateTestRun(b.ctx, &bad) }), store.ErrNotFound)
		}
		// Nothing of a run that failed to go in stays.
		wantEqual(t, 1, read(t, b, func(tx store.Tx) (int, error) { return tx.CountRunningTestRuns(b.ctx, b.org.ID, s.ID) }))
		dup := r
		dup.Attempts = nil
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateTestRun(b.ctx, &dup) }), store.ErrConflict)
	}},
	{"RunList", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		sibling := newTestSuite(t, b, b.org.ID, model.NewID())
		c1, c2 := newTestCase(t, b, b.org.ID, s.ID), newTestCase(t, b, b.org.ID, s.ID)
		var rows []created
		byID := map[string]model.TestRun{}
		for i, sec := range []int{3, 1, 2, 2, 5} {
			// 0 to 4 attempts of each case, interleaved, c2 first in the
			// odd runs.
			first, second := c1, c2
			if i%2 == 1 {
				first, second = c2, c1
			}
			r := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, func(r *model.TestRun) {
				r.CreatedAt = at(sec)
				for n := range i {
					r.Attempts = append(r.Attempts, newTestAttempt(first, n+1), newTestAttempt(second, n+1))
				}
			})
			rows = append(rows, created{r.ID, r.CreatedAt})
			// Read back in case order (first's, then second's), then
			// attempt number.
			var order []model.TestAttempt
			for _, start := range []int{0, 1} {
				for j := start; j < len(r.Attempts); j += 2 {
					order = append(order, r.Attempts[j])
				}
			}
			got := getTestRun(t, b, b.org.ID, s.ID, r.ID, true)
			wantEqual(t, order, got.Attempts, cmpopts.EquateEmpty())
			byID[r.ID] = got
		}
		newTestRun(t, b, b.org.ID, sibling.ID, sibling.AgentID)
		newTestRun(t, b, b.other.ID, newTestSuite(t, b, b.other.ID, model.NewID()).ID, model.NewID())
		list := func(with bool) func(store.Page) ([]string, int) {
			return func(p store.Page) ([]string, int) {
				var total int
				got := read(t, b, func(tx store.Tx) ([]model.TestRun, error) {
					rows, n, err := tx.ListTestRuns(b.ctx, b.org.ID, s.ID, store.TestRunFilter{Page: p, WithAttempts: with})
					total = n
					return rows, err
				})
				// Each run as GetTestRun reads it, attempts only when asked.
				for _, r := range got {
					want := byID[r.ID]
					if !with {
						want.Attempts = nil
					}
					wantEqual(t, want, r)
				}
				return ids(got, func(r model.TestRun) string { return r.ID }), total
			}
		}
		checkPaging(t, oldestFirst(rows), list(false))
		checkPaging(t, oldestFirst(rows), list(true))
		none := read(t, b, func(tx store.Tx) ([]model.TestRun, error) {
			rows, n, err := tx.ListTestRuns(b.ctx, b.org.ID, model.NewID(), store.TestRunFilter{WithAttempts: true})
			wantEqual(t, 0, n)
			return rows, err
		})
		wantEqual(t, []model.TestRun{}, none)
	}},
	{"CountRunning", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		sibling := newTestSuite(t, b, b.org.ID, model.NewID())
		count := func(suiteID string) int {
			return read(t, b, func(tx store.Tx) (int, error) { return tx.CountRunningTestRuns(b.ctx, b.org.ID, suiteID) })
		}
		wantEqual(t, 0, count(s.ID))
		r1 := newTestRun(t, b, b.org.ID, s.ID, s.AgentID)
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID)
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted))
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCanceled))
		newTestRun(t, b, b.org.ID, sibling.ID, sibling.AgentID)
		wantEqual(t, 2, count(s.ID))
		wantEqual(t, 1, count(sibling.ID))
		wantEqual(t, 0, count("not-a-uuid"))
		r1.Status = model.TestRunCompleted
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestRun(b.ctx, &r1) })
		wantEqual(t, 1, count(s.ID))
	}},
	{"RunsToDrive", func(t *testing.T, b *bundle) {
		now := at(100)
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		theirs := newTestSuite(t, b, b.other.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID)
		run := func(suite model.TestSuite, sec int, mods ...func(*model.TestRun)) model.TestRun {
			mods = append([]func(*model.TestRun){func(r *model.TestRun) { r.CreatedAt = at(sec) }}, mods...)
			return newTestRun(t, b, suite.OrgID, suite.ID, suite.AgentID, mods...)
		}
		// Created out of order, so the result's order is by creation time.
		mine := run(s, 4, leasedRun("node-a", at(130)), func(r *model.TestRun) {
			r.Attempts = []model.TestAttempt{newTestAttempt(c, 2), newTestAttempt(c, 1)}
		})
		expired := run(theirs, 1, leasedRun("node-b", at(99)))
		unleased := run(s, 2)
		ownerless := run(s, 3, func(r *model.TestRun) { r.LeaseExpiresAt = ptr(at(130)) })
		run(s, 5, leasedRun("node-b", now)) // expires at now: not before it
		run(theirs, 6, leasedRun("node-b", at(130)))
		run(s, 7, leasedRun("node-a", at(50)), endedRun(model.TestRunCompleted))
		run(s, 8, leasedRun("node-a", at(50)), endedRun(model.TestRunCanceled))

		drive := func(owner string, n int, inWrite bool) []model.TestRun {
			var got []model.TestRun
			fn := func(tx store.Tx) (err error) { got, err = tx.RunsToDrive(b.ctx, owner, now, n); return }
			if inWrite {
				b.update(t, fn)
			} else if err := b.view(fn); err != nil {
				t.Fatal(err)
			}
			return got
		}
		runIDs := func(runs []model.TestRun) []string { return ids(runs, func(r model.TestRun) string { return r.ID }) }
		for _, inWrite := range []bool{true, false} {
			wantEqual(t, []string{expired.ID, unleased.ID, ownerless.ID}, runIDs(drive("", 10, inWrite)))
			wantEqual(t, []string{expired.ID, unleased.ID, ownerless.ID, mine.ID}, runIDs(drive("node-a", 10, inWrite)))
			wantEqual(t, []string{expired.ID, unleased.ID}, runIDs(drive("node-a", 2, inWrite)))
			wantEqual(t, []string{expired.ID, unleased.ID, ownerless.ID}, runIDs(drive("node-z", 10, inWrite)))
			wantEqual(t, []string{}, runIDs(drive("node-a", 0, inWrite)))
		}
		// Whole runs, attempts included (and in order).
		got := drive("node-a", 10, true)
		wantEqual(t, getTestRun(t, b, b.other.ID, theirs.ID, expired.ID, true), got[0])
		wantEqual(t, getTestRun(t, b, b.org.ID, s.ID, mine.ID, true), got[3])
		wantEqual(t, []int{1, 2}, []int{got[3].Attempts[0].AttemptNumber, got[3].Attempts[1].AttemptNumber})
		wantEqual(t, []model.TestAttempt{}, got[0].Attempts)
	}},
	{"RenewLeases", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		theirs := newTestSuite(t, b, b.other.ID, model.NewID())
		a1 := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, leasedRun("node-a", at(10)))
		a2 := newTestRun(t, b, b.other.ID, theirs.ID, theirs.AgentID, leasedRun("node-a", at(5)))
		bRun := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, leasedRun("node-b", at(10)))
		done := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, leasedRun("node-a", at(10)), endedRun(model.TestRunCompleted))
		renew := func(owner string, ids []string, until time.Time) int {
			var n int
			b.update(t, func(tx store.Tx) (err error) { n, err = tx.RenewTestRunLeases(b.ctx, owner, ids, until); return })
			return n
		}
		all := []string{a1.ID, a2.ID, bRun.ID, done.ID}
		// Only the runs named are renewed: a server renews the runs it drives.
		wantEqual(t, 1, renew("node-a", []string{a2.ID, "not-a-uuid", model.NewID()}, at(20)))
		wantEqual(t, ptr(at(20)), getTestRun(t, b, b.other.ID, theirs.ID, a2.ID, false).LeaseExpiresAt)
		wantEqual(t, a1, getTestRun(t, b, b.org.ID, s.ID, a1.ID, false))
		wantEqual(t, 2, renew("node-a", all, at(60)))
		wantEqual(t, 0, renew("", all, at(70)))
		wantEqual(t, 0, renew("node-z", all, at(70)))
		wantEqual(t, 0, renew("node-a", nil, at(70)))
		a1.LeaseExpiresAt, a2.LeaseExpiresAt = ptr(at(60)), ptr(at(60)) // updatedAt stays
		wantEqual(t, a1, getTestRun(t, b, b.org.ID, s.ID, a1.ID, false))
		wantEqual(t, a2, getTestRun(t, b, b.other.ID, theirs.ID, a2.ID, false))
		wantEqual(t, bRun, getTestRun(t, b, b.org.ID, s.ID, bRun.ID, false))
		wantEqual(t, done, getTestRun(t, b, b.org.ID, s.ID, done.ID, false))
		// More ids than one statement takes.
		many := make([]string, 0, 1202)
		for range 1200 {
			many = append(many, model.NewID())
		}
		wantEqual(t, 2, renew("node-a", append(many, a1.ID, a2.ID), at(80)))
	}},
	{"PendingWebhooks", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		theirs := newTestSuite(t, b, b.other.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID)
		url := ptr("https://example.com/test-runs")
		pending := func(sec int) func(*model.TestRun) {
			return func(r *model.TestRun) { r.CreatedAt, r.WebhookURL = at(sec), url }
		}
		p1 := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted), pending(30), func(r *model.TestRun) {
			r.Attempts = []model.TestAttempt{newTestAttempt(c, 1)}
		})
		p2 := newTestRun(t, b, b.other.ID, theirs.ID, theirs.AgentID, endedRun(model.TestRunCanceled), pending(10))
		p3 := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted), pending(30)) // ties p1: by id
		// Not in the outbox: still running, already sent or failed, no URL.
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID, pending(5))
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted), pending(5),
			func(r *model.TestRun) { r.WebhookStatus = ptr(model.WebhookSent) })
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted), pending(5),
			func(r *model.TestRun) { r.WebhookStatus = ptr(model.WebhookFailed) })
		newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted), pending(5),
			func(r *model.TestRun) { r.WebhookURL = nil })
		want := oldestFirst([]created{{p1.ID, at(30)}, {p2.ID, at(10)}, {p3.ID, at(30)}})
		runIDs := func(runs []model.TestRun) []string { return ids(runs, func(r model.TestRun) string { return r.ID }) }
		for _, inWrite := range []bool{true, false} {
			for _, n := range []int{0, 2, 10} {
				var got []model.TestRun
				fn := func(tx store.Tx) (err error) { got, err = tx.PendingTestRunWebhooks(b.ctx, n); return }
				if inWrite {
					b.update(t, fn)
				} else if err := b.view(fn); err != nil {
					t.Fatal(err)
				}
				wantEqual(t, want[:min(n, len(want))], runIDs(got), cmpopts.EquateEmpty())
			}
		}
		got := read(t, b, func(tx store.Tx) ([]model.TestRun, error) { return tx.PendingTestRunWebhooks(b.ctx, 10) })
		for _, r := range got {
			wantEqual(t, getTestRun(t, b, r.OrgID, r.SuiteID, r.ID, true), r)
		}

		// Once its status is recorded, a run leaves the outbox, and nothing
		// else of it changes.
		b.update(t, func(tx store.Tx) error {
			return tx.SetTestRunWebhookStatus(b.ctx, b.other.ID, p2.ID, model.WebhookSent)
		})
		p2.WebhookStatus = ptr(model.WebhookSent)
		wantEqual(t, p2, getTestRun(t, b, b.other.ID, theirs.ID, p2.ID, false))
		got = read(t, b, func(tx store.Tx) ([]model.TestRun, error) { return tx.PendingTestRunWebhooks(b.ctx, 10) })
		wantEqual(t, []string{want[1], want[2]}, runIDs(got))
	}},
	{"DriversTakeDifferentRuns", func(t *testing.T, b *bundle) {
		// On PostgreSQL two servers taking runs at once skip each other's
		// locked runs instead of waiting or taking the same ones. SQLite
		// runs one write transaction at a time, so there is nothing to skip.
		if b.st.Engine() != "postgres" {
			t.Skip("SQLite serialises write transactions")
		}
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		for range 4 {
			newTestRun(t, b, b.org.ID, s.ID, s.AgentID, leasedRun("node-b", at(1)))
			newTestRun(t, b, b.org.ID, s.ID, s.AgentID, endedRun(model.TestRunCompleted),
				func(r *model.TestRun) { r.WebhookURL = ptr("https://example.com/test-runs") })
		}
		takes := []func(ctx context.Context, tx store.Tx) ([]model.TestRun, error){
			func(ctx context.Context, tx store.Tx) ([]model.TestRun, error) {
				return tx.RunsToDrive(ctx, "node-a", at(2), 2)
			},
			func(ctx context.Context, tx store.Tx) ([]model.TestRun, error) {
				return tx.PendingTestRunWebhooks(ctx, 2)
			},
		}
		for _, take := range takes {
			var first, second []model.TestRun
			b.update(t, func(tx store.Tx) (err error) {
				if first, err = take(b.ctx, tx); err != nil {
					return err
				}
				// Another server, while this transaction holds its rows: it
				// must neither wait for them nor take them.
				ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
				defer cancel()
				return b.st.Update(ctx, func(tx store.Tx) (err error) { second, err = take(ctx, tx); return })
			})
			if len(first) != 2 || len(second) != 2 {
				t.Fatalf("took %d then %d runs, want 2 and 2", len(first), len(second))
			}
			for _, r := range second {
				for _, f := range first {
					if r.ID == f.ID {
						t.Fatalf("both transactions took run %s", r.ID)
					}
				}
			}
		}
	}},
}

// What deleting a suite, a case or an agent does to the rest.
var testSuiteCascadeTests = []test{
	{"DeleteSuite", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		keep := newTestSuite(t, b, b.org.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID)
		kc := newTestCase(t, b, b.org.ID, keep.ID)
		r := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, func(r *model.TestRun) {
			r.Attempts = []model.TestAttempt{newTestAttempt(c, 1), newTestAttempt(c, 2)}
		})
		kr := newTestRun(t, b, b.org.ID, keep.ID, keep.AgentID, func(r *model.TestRun) {
			r.Attempts = []model.TestAttempt{newTestAttempt(kc, 1)}
		})

		b.update(t, func(tx store.Tx) error { return tx.DeleteTestSuite(b.ctx, b.org.ID, s.ID) })

		wantIs(t, readErr(b, func(tx store.Tx) (model.TestCase, error) { return tx.GetTestCase(b.ctx, b.org.ID, s.ID, c.ID) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.TestRun, error) { return tx.GetTestRunForUpdate(b.ctx, b.org.ID, r.ID) }), store.ErrNotFound)
		for _, a := range r.Attempts {
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateTestAttempt(b.ctx, &a) }), store.ErrNotFound)
		}
		wantEqual(t, 0, read(t, b, func(tx store.Tx) (int, error) { return tx.CountRunningTestRuns(b.ctx, b.org.ID, s.ID) }))
		runs := read(t, b, func(tx store.Tx) ([]model.TestRun, error) { return tx.RunsToDrive(b.ctx, "", at(100), 10) })
		wantEqual(t, []model.TestRun{kr}, runs)
		wantEqual(t, kc, getTestCase(t, b, b.org.ID, keep.ID, kc.ID))
	}},
	{"DeleteCaseKeepsAttempts", func(t *testing.T, b *bundle) {
		s := newTestSuite(t, b, b.org.ID, model.NewID())
		c := newTestCase(t, b, b.org.ID, s.ID)
		r := newTestRun(t, b, b.org.ID, s.ID, s.AgentID, func(r *model.TestRun) {
			r.Attempts = []model.TestAttempt{fullTestAttempt(c, 1)}
		})
		b.update(t, func(tx store.Tx) error { return tx.DeleteTestCase(b.ctx, b.org.ID, s.ID, c.ID) })
		wantEqual(t, r, getTestRun(t, b, b.org.ID, s.ID, r.ID, true))
		// And it can still be written: attempts copy their case.
		a := r.Attempts[0]
		a.Status, a.Passed = model.AttemptFailed, ptr(false)
		b.update(t, func(tx store.Tx) error { return tx.UpdateTestAttempt(b.ctx, &a) })
		wantEqual(t, []model.TestAttempt{a}, getTestRun(t, b, b.org.ID, s.ID, r.ID, true).Attempts)
	}},
	{"DeleteAgentKeepsSuites", func(t *testing.T, b *bundle) {
		agent := newAgent(t, b, b.org.ID)
		s := newTestSuite(t, b, b.org.ID, agent.ID)
		r := newTestRun(t, b, b.org.ID, s.ID, agent.ID)
		b.update(t, func(tx store.Tx) error { return tx.DeleteAgent(b.ctx, b.org.ID, agent.ID) })
		wantEqual(t, s, getTestSuite(t, b, b.org.ID, s.ID))
		wantEqual(t, r, getTestRun(t, b, b.org.ID, s.ID, r.ID, false))
	}},
}

// offset is at(i) plus 1.5 ms, in another zone: not yet what the store
// keeps (UTC, whole milliseconds).
func offset(i int) time.Time {
	return at(i).In(time.FixedZone("CET", 3600)).Add(1500 * time.Microsecond)
}

func newTestSuite(t *testing.T, b *bundle, orgID, agentID string, mods ...func(*model.TestSuite)) model.TestSuite {
	t.Helper()
	s := model.TestSuite{OrgID: orgID, AgentID: agentID, Name: "Greeting", CreatedAt: at(0), UpdatedAt: at(0)}
	for _, m := range mods {
		m(&s)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateTestSuite(b.ctx, &s) })
	return s
}

func newTestCase(t *testing.T, b *bundle, orgID, suiteID string, mods ...func(*model.TestCase)) model.TestCase {
	t.Helper()
	c := model.TestCase{
		OrgID:         orgID,
		SuiteID:       suiteID,
		Name:          "Asks for hours",
		Script:        "You are {{name}}. Ask when the shop opens.",
		ScoringRubric: "The agent gives the opening hours.",
		Variables:     map[string]any{"name": "Ada", "age": 36.0, "vip": true, "tags": []any{"a", 1.5}, "nested": map[string]any{"none": nil}},
		Attempts:      2,
		CreatedAt:     at(0),
		UpdatedAt:     at(0),
	}
	for _, m := range mods {
		m(&c)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateTestCase(b.ctx, &c) })
	return c
}

// newTestRun creates a running run without a lease (and, unless mods add
// some, without attempts).
func newTestRun(t *testing.T, b *bundle, orgID, suiteID, agentID string, mods ...func(*model.TestRun)) model.TestRun {
	t.Helper()
	r := model.TestRun{
		OrgID:     orgID,
		SuiteID:   suiteID,
		AgentID:   agentID,
		Name:      "Run",
		Mode:      model.TestModeCall,
		Status:    model.TestRunRunning,
		StartedAt: ptr(at(1)),
		CreatedAt: at(0),
		UpdatedAt: at(0),
	}
	for _, m := range mods {
		m(&r)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateTestRun(b.ctx, &r) })
	return r
}

func leasedRun(owner string, until time.Time) func(*model.TestRun) {
	return func(r *model.TestRun) { r.LeaseOwner, r.LeaseExpiresAt = &owner, &until }
}

func endedRun(status string) func(*model.TestRun) {
	return func(r *model.TestRun) { r.Status, r.CompletedAt = status, ptr(at(20)) }
}

// fullTestRun sets every field of a run but its attempts.
func fullTestRun(orgID, suiteID, agentID string) model.TestRun {
	return model.TestRun{
		OrgID:          orgID,
		SuiteID:        suiteID,
		AgentID:        agentID,
		Name:           "Nightly ☾",
		Mode:           model.TestModeText,
		Status:         model.TestRunCompleted,
		TotalTests:     4,
		PassedTests:    3,
		FailedTests:    1,
		ErrorMessage:   ptr("one attempt was cut"),
		WebhookURL:     ptr("https://example.com/test-runs"),
		WebhookStatus:  ptr(model.WebhookFailed),
		LeaseOwner:     ptr("node-a"),
		LeaseExpiresAt: ptr(offset(90)),
		CreatedAt:      offset(1),
		UpdatedAt:      offset(30),
		StartedAt:      ptr(offset(2)),
		CompletedAt:    ptr(offset(29)),
	}
}

// newTestAttempt is a pending attempt of c, a copy of the case.
func newTestAttempt(c model.TestCase, n int) model.TestAttempt {
	return model.TestAttempt{
		TestCaseID:    c.ID,
		TestCaseName:  c.Name,
		AttemptNumber: n,
		Script:        c.Script,
		ScoringRubric: c.ScoringRubric,
		Variables:     c.Variables,
		Status:        model.AttemptPending,
		CreatedAt:     at(0),
		UpdatedAt:     at(0),
	}
}

// fullTestAttempt is a finished attempt of c with every field set.
func fullTestAttempt(c model.TestCase, n int) model.TestAttempt {
	a := newTestAttempt(c, n)
	a.Variables = map[string]any{"name": "Bob", "nul": "a\x00b", "n": 2.0}
	a.Status = model.AttemptPassed
	a.Passed = ptr(true)
	a.CallerAgentID, a.CallID, a.InboundCallID = ptr(model.NewID()), ptr(model.NewID()), ptr(model.NewID())
	a.Reasoning = ptr("Gave the hours — 9 to 5.")
	a.ErrorMessage = ptr("judge retried once")
	a.Transcript = []map[string]any{
		{"role": "assistant", "text": "Hello!", "seq": 0.0},
		{"role": "user", "text": "When do you open? ünïcødé", "seq": 1.0},
		{"role": "tool", "type": "tool_call", "tool": map[string]any{"name": "hours", "args": `{"day":"mon"}`}},
	}
	a.CreatedAt, a.UpdatedAt = offset(3), offset(12)
	a.StartedAt, a.CompletedAt = ptr(offset(4)), ptr(offset(11))
	return a
}

func getTestSuite(t *testing.T, b *bundle, orgID, id string) model.TestSuite {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.TestSuite, error) { return tx.GetTestSuite(b.ctx, orgID, id) })
}

func getTestCase(t *testing.T, b *bundle, orgID, suiteID, id string) model.TestCase {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.TestCase, error) { return tx.GetTestCase(b.ctx, orgID, suiteID, id) })
}

func getTestRun(t *testing.T, b *bundle, orgID, suiteID, id string, withAttempts bool) model.TestRun {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.TestRun, error) {
		return tx.GetTestRun(b.ctx, orgID, suiteID, id, withAttempts)
	})
}
