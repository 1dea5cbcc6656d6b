package sqlstore

import (
	"context"
	"fmt"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const testCaseColumns = "id, org_id, suite_id, name, script, scoring_rubric, variables, attempts, created_at, updated_at"

func scanTestCase(r rowScanner) (model.TestCase, error) {
	var c model.TestCase
	err := r.Scan(&c.ID, &c.OrgID, &c.SuiteID, &c.Name, &c.Script, &c.ScoringRubric, documentDest{&c.Variables},
		&c.Attempts, timeDest{&c.CreatedAt}, timeDest{&c.UpdatedAt})
	return c, err
}

// oldestFirst orders a list by creation time then id, in p's direction,
// ascending unless p says otherwise.
func oldestFirst(p store.Page) string {
	if p.SortDir == "" {
		p.SortDir = store.Asc
	}
	return newestFirst(p)
}

// testCaseVariables is the case's variables as stored: nil is {}, written
// back so the caller holds what reading the case gives.
func testCaseVariables(c *model.TestCase) (string, error) {
	if c.Variables == nil {
		c.Variables = map[string]any{}
	}
	v, err := document(c.Variables)
	if err != nil {
		return "", fmt.Errorf("test case %s variables: %w", c.ID, err)
	}
	return v, nil
}

// CreateTestCase inserts the case; a suite outside the organization is
// ErrNotFound.
func (t *tx) CreateTestCase(ctx context.Context, c *model.TestCase) error {
	if c.ID == "" {
		c.ID = model.NewID()
	}
	c.CreatedAt, c.UpdatedAt = stamp(c.CreatedAt), stamp(c.UpdatedAt)
	if !uuids(c.ID, c.OrgID, c.SuiteID) {
		return notFound("create test case %s: test suite %s", c.ID, c.SuiteID)
	}
	vars, err := testCaseVariables(c)
	if err != nil {
		return fmt.Errorf("create %w", err)
	}
	_, err = t.exec(ctx, `INSERT INTO test_cases (`+testCaseColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.OrgID, c.SuiteID, c.Name, c.Script, c.ScoringRubric, vars, c.Attempts,
		t.time(c.CreatedAt), t.time(c.UpdatedAt))
	if err != nil {
		return t.fail(err, "create test case %s", c.ID)
	}
	return nil
}

func (t *tx) GetTestCase(ctx context.Context, orgID, suiteID, id string) (model.TestCase, error) {
	if !uuids(orgID, suiteID, id) {
		return model.TestCase{}, notFound("get test case %s", id)
	}
	return get(ctx, t, scanTestCase, "get test case "+id,
		`SELECT `+testCaseColumns+` FROM test_cases WHERE org_id = ? AND suite_id = ? AND id = ?`, orgID, suiteID, id)
}

func (t *tx) ListTestCases(ctx context.Context, orgID, suiteID string, p store.Page) ([]model.TestCase, int, error) {
	if !uuids(orgID, suiteID) {
		return []model.TestCase{}, 0, nil
	}
	return list(ctx, t, listing{
		columns: testCaseColumns,
		from:    "test_cases",
		where:   "org_id = ? AND suite_id = ?",
		args:    []any{orgID, suiteID},
		order:   oldestFirst(p),
		page:    p,
	}, scanTestCase, "list test cases")
}

func (t *tx) UpdateTestCase(ctx context.Context, c *model.TestCase) error {
	if !uuids(c.OrgID, c.SuiteID, c.ID) {
		return notFound("update test case %s", c.ID)
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	vars, err := testCaseVariables(c)
	if err != nil {
		return fmt.Errorf("update %w", err)
	}
	return t.change(ctx, "update test case "+c.ID,
		`UPDATE test_cases SET name = ?, script = ?, scoring_rubric = ?, variables = ?, attempts = ?, updated_at = ?
		WHERE org_id = ? AND suite_id = ? AND id = ?`,
		c.Name, c.Script, c.ScoringRubric, vars, c.Attempts, t.time(c.UpdatedAt), c.OrgID, c.SuiteID, c.ID)
}

// DeleteTestCase deletes the case; runs keep their attempts of it, which
// carry a copy.
func (t *tx) DeleteTestCase(ctx context.Context, orgID, suiteID, id string) error {
	if !uuids(orgID, suiteID, id) {
		return notFound("delete test case %s", id)
	}
	return t.change(ctx, "delete test case "+id,
		`DELETE FROM test_cases WHERE org_id = ? AND suite_id = ? AND id = ?`, orgID, suiteID, id)
}
