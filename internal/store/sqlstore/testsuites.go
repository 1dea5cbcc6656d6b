package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const testSuiteColumns = "id, org_id, agent_id, name, description, created_at, updated_at"

func scanTestSuite(r rowScanner) (model.TestSuite, error) {
	var s model.TestSuite
	err := r.Scan(&s.ID, &s.OrgID, &s.AgentID, &s.Name, &s.Description, timeDest{&s.CreatedAt}, timeDest{&s.UpdatedAt})
	return s, err
}

// CreateTestSuite inserts the suite; an organization that does not exist is
// ErrNotFound, and so is an agent id that is not a UUID (it can name none).
// The agent is recorded, not referenced: the suite outlives it.
func (t *tx) CreateTestSuite(ctx context.Context, s *model.TestSuite) error {
	if s.ID == "" {
		s.ID = model.NewID()
	}
	s.CreatedAt, s.UpdatedAt = stamp(s.CreatedAt), stamp(s.UpdatedAt)
	if !uuids(s.ID, s.OrgID, s.AgentID) {
		return notFound("create test suite %s: organization %s, agent %s", s.ID, s.OrgID, s.AgentID)
	}
	_, err := t.exec(ctx, `INSERT INTO test_suites (`+testSuiteColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.OrgID, s.AgentID, s.Name, s.Description, t.time(s.CreatedAt), t.time(s.UpdatedAt))
	if err != nil {
		return t.fail(err, "create test suite %s", s.ID)
	}
	return nil
}

func (t *tx) GetTestSuite(ctx context.Context, orgID, id string) (model.TestSuite, error) {
	if !uuids(orgID, id) {
		return model.TestSuite{}, notFound("get test suite %s", id)
	}
	return get(ctx, t, scanTestSuite, "get test suite "+id,
		`SELECT `+testSuiteColumns+` FROM test_suites WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) ListTestSuites(ctx context.Context, orgID string, f store.TestSuiteFilter) ([]model.TestSuite, int, error) {
	if !uuids(orgID) {
		return []model.TestSuite{}, 0, nil
	}
	where, args := "org_id = ?", []any{orgID}
	if f.AgentID != "" {
		if !uuids(f.AgentID) {
			return []model.TestSuite{}, 0, nil
		}
		where += " AND agent_id = ?"
		args = append(args, f.AgentID)
	}
	if f.Query != "" {
		where += ` AND lower(name) LIKE lower(?) ESCAPE '\'`
		args = append(args, "%"+escapeLike(f.Query)+"%")
	}
	return list(ctx, t, listing{
		columns: testSuiteColumns,
		from:    "test_suites",
		where:   where,
		args:    args,
		order:   newestFirst(f.Page),
		page:    f.Page,
	}, scanTestSuite, "list test suites")
}

func (t *tx) UpdateTestSuite(ctx context.Context, s *model.TestSuite) error {
	if !uuids(s.OrgID, s.ID, s.AgentID) {
		return notFound("update test suite %s: agent %s", s.ID, s.AgentID)
	}
	s.UpdatedAt = stamp(s.UpdatedAt)
	return t.change(ctx, "update test suite "+s.ID,
		`UPDATE test_suites SET name = ?, description = ?, agent_id = ?, updated_at = ? WHERE org_id = ? AND id = ?`,
		s.Name, s.Description, s.AgentID, t.time(s.UpdatedAt), s.OrgID, s.ID)
}

// DeleteTestSuite deletes the suite; the schema deletes its cases, runs and
// attempts with it.
func (t *tx) DeleteTestSuite(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete test suite %s", id)
	}
	return t.change(ctx, "delete test suite "+id,
		`DELETE FROM test_suites WHERE org_id = ? AND id = ?`, orgID, id)
}
