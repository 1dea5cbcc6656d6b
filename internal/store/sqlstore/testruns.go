package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// testRunColumns is every column of test_runs. Queries name the table r.
const testRunColumns = "r.id, r.org_id, r.suite_id, r.agent_id, r.name, r.mode, r.status, r.total_tests, " +
	"r.passed_tests, r.failed_tests, r.error_message, r.webhook_url, r.webhook_status, r.lease_owner, " +
	"r.lease_expires_at, r.created_at, r.updated_at, r.started_at, r.completed_at"

func scanTestRun(rs rowScanner) (model.TestRun, error) {
	var r model.TestRun
	err := rs.Scan(&r.ID, &r.OrgID, &r.SuiteID, &r.AgentID, &r.Name, &r.Mode, &r.Status, &r.TotalTests,
		&r.PassedTests, &r.FailedTests, &r.ErrorMessage, &r.WebhookURL, &r.WebhookStatus, &r.LeaseOwner,
		nullTimeDest{&r.LeaseExpiresAt}, timeDest{&r.CreatedAt}, timeDest{&r.UpdatedAt},
		nullTimeDest{&r.StartedAt}, nullTimeDest{&r.CompletedAt})
	return r, err
}

// runningTestRun is the status condition of running runs, a literal so both
// engines match it to the partial index test_runs_running.
const runningTestRun = "r.status = '" + model.TestRunRunning + "'"

// testRunWrite prepares r to be written: times in UTC to the millisecond,
// CreatedAt (with create) and UpdatedAt now when unset. Ids that are not
// UUIDs name nothing, which is ErrNotFound.
func testRunWrite(r *model.TestRun, create bool) error {
	if create {
		if r.ID == "" {
			r.ID = model.NewID()
		}
		r.CreatedAt = stamp(r.CreatedAt)
	}
	r.UpdatedAt = stamp(r.UpdatedAt)
	stampPtr(&r.LeaseExpiresAt)
	stampPtr(&r.StartedAt)
	stampPtr(&r.CompletedAt)
	if !uuids(r.ID, r.OrgID, r.SuiteID, r.AgentID) {
		return notFound("test run %s: organization %s, test suite %s, agent %s", r.ID, r.OrgID, r.SuiteID, r.AgentID)
	}
	return nil
}

// CreateTestRun inserts the run and its attempts; a suite outside the
// organization is ErrNotFound.
func (t *tx) CreateTestRun(ctx context.Context, r *model.TestRun) error {
	if err := testRunWrite(r, true); err != nil {
		return fmt.Errorf("create %w", err)
	}
	_, err := t.exec(ctx, `INSERT INTO test_runs (id, org_id, suite_id, agent_id, name, mode, status, total_tests,
		passed_tests, failed_tests, error_message, webhook_url, webhook_status, lease_owner, lease_expires_at,
		created_at, updated_at, started_at, completed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.OrgID, r.SuiteID, r.AgentID, r.Name, r.Mode, r.Status, r.TotalTests,
		r.PassedTests, r.FailedTests, r.ErrorMessage, r.WebhookURL, r.WebhookStatus, r.LeaseOwner,
		t.nullTime(r.LeaseExpiresAt), t.time(r.CreatedAt), t.time(r.UpdatedAt),
		t.nullTime(r.StartedAt), t.nullTime(r.CompletedAt))
	if err != nil {
		return t.fail(err, "create test run %s", r.ID)
	}
	return t.createTestAttempts(ctx, r)
}

func (t *tx) GetTestRun(ctx context.Context, orgID, suiteID, id string, withAttempts bool) (model.TestRun, error) {
	if !uuids(orgID, suiteID, id) {
		return model.TestRun{}, notFound("get test run %s", id)
	}
	r, err := get(ctx, t, scanTestRun, "get test run "+id,
		`SELECT `+testRunColumns+` FROM test_runs r WHERE r.org_id = ? AND r.suite_id = ? AND r.id = ?`, orgID, suiteID, id)
	if err != nil || !withAttempts {
		return r, err
	}
	return t.withTestAttempts(ctx, r)
}

// GetTestRunForUpdate reads the run and its attempts and, in a write
// transaction on PostgreSQL, locks the run's row until the transaction
// ends. The attempts are not locked: their writers hold the run first.
func (t *tx) GetTestRunForUpdate(ctx context.Context, orgID, id string) (model.TestRun, error) {
	if !uuids(orgID, id) {
		return model.TestRun{}, notFound("get test run %s for update", id)
	}
	r, err := get(ctx, t, scanTestRun, "get test run "+id+" for update",
		`SELECT `+testRunColumns+` FROM test_runs r WHERE r.org_id = ? AND r.id = ?`+t.forUpdate(false), orgID, id)
	if err != nil {
		return r, err
	}
	return t.withTestAttempts(ctx, r)
}

// withTestAttempts is r with its attempts loaded.
func (t *tx) withTestAttempts(ctx context.Context, r model.TestRun) (model.TestRun, error) {
	runs := []model.TestRun{r}
	if err := t.loadTestAttempts(ctx, runs); err != nil {
		return model.TestRun{}, err
	}
	return runs[0], nil
}

func (t *tx) ListTestRuns(ctx context.Context, orgID, suiteID string, f store.TestRunFilter) ([]model.TestRun, int, error) {
	if !uuids(orgID, suiteID) {
		return []model.TestRun{}, 0, nil
	}
	runs, total, err := list(ctx, t, listing{
		columns: testRunColumns,
		from:    "test_runs r",
		where:   "r.org_id = ? AND r.suite_id = ?",
		args:    []any{orgID, suiteID},
		order:   newestFirst(f.Page),
		page:    f.Page,
	}, scanTestRun, "list test runs")
	if err != nil || !f.WithAttempts {
		return runs, total, err
	}
	if err := t.loadTestAttempts(ctx, runs); err != nil {
		return nil, 0, err
	}
	return runs, total, nil
}

// UpdateTestRun writes every column but the keys, suite_id and created_at.
func (t *tx) UpdateTestRun(ctx context.Context, r *model.TestRun) error {
	if !uuids(r.OrgID, r.ID) {
		return notFound("update test run %s", r.ID)
	}
	if err := testRunWrite(r, false); err != nil {
		return fmt.Errorf("update %w", err)
	}
	return t.change(ctx, "update test run "+r.ID,
		`UPDATE test_runs SET agent_id = ?, name = ?, mode = ?, status = ?, total_tests = ?, passed_tests = ?,
		failed_tests = ?, error_message = ?, webhook_url = ?, webhook_status = ?, lease_owner = ?,
		lease_expires_at = ?, updated_at = ?, started_at = ?, completed_at = ?
		WHERE org_id = ? AND id = ?`,
		r.AgentID, r.Name, r.Mode, r.Status, r.TotalTests, r.PassedTests,
		r.FailedTests, r.ErrorMessage, r.WebhookURL, r.WebhookStatus, r.LeaseOwner,
		t.nullTime(r.LeaseExpiresAt), t.time(r.UpdatedAt), t.nullTime(r.StartedAt), t.nullTime(r.CompletedAt),
		r.OrgID, r.ID)
}

func (t *tx) CountRunningTestRuns(ctx context.Context, orgID, suiteID string) (int, error) {
	if !uuids(orgID, suiteID) {
		return 0, nil
	}
	return t.count(ctx, "count running test runs",
		`SELECT count(*) FROM test_runs r WHERE r.org_id = ? AND r.suite_id = ? AND `+runningTestRun, orgID, suiteID)
}

// RunsToDrive lists running runs that owner holds, whose lease expired
// before now, or that have none, oldest first. In a write transaction on
// PostgreSQL they are locked and rows another transaction holds are passed
// over, as ExpiredLiveCalls does with calls.
func (t *tx) RunsToDrive(ctx context.Context, owner string, now time.Time, n int) ([]model.TestRun, error) {
	if n <= 0 {
		return []model.TestRun{}, nil
	}
	lost, args := "r.lease_owner IS NULL OR r.lease_expires_at IS NULL OR r.lease_expires_at < ?", []any{t.time(now)}
	if owner != "" {
		lost += " OR r.lease_owner = ?"
		args = append(args, owner)
	}
	runs, err := all(ctx, t, scanTestRun, "list test runs to drive",
		`SELECT `+testRunColumns+` FROM test_runs r WHERE `+runningTestRun+` AND (`+lost+`)
		ORDER BY r.created_at, r.id LIMIT ?`+t.forUpdate(true), append(args, n)...)
	if err != nil {
		return nil, err
	}
	if err := t.loadTestAttempts(ctx, runs); err != nil {
		return nil, err
	}
	return runs, nil
}

// RenewTestRunLeases moves the lease of those of ids that owner holds
// running to until, leaving updated_at alone: a lease is bookkeeping, not a
// change to the run.
func (t *tx) RenewTestRunLeases(ctx context.Context, owner string, ids []string, until time.Time) (int, error) {
	return t.renewLeases(ctx, "test_runs", "status = '"+model.TestRunRunning+"'", owner, ids, until)
}

// PendingTestRunWebhooks is the test_run.completed outbox, oldest run first;
// locked as RunsToDrive's rows are.
func (t *tx) PendingTestRunWebhooks(ctx context.Context, n int) ([]model.TestRun, error) {
	if n <= 0 {
		return []model.TestRun{}, nil
	}
	runs, err := all(ctx, t, scanTestRun, "list pending test run webhooks",
		`SELECT `+testRunColumns+` FROM test_runs r
		WHERE r.webhook_url IS NOT NULL AND r.webhook_status IS NULL AND r.status <> '`+model.TestRunRunning+`'
		ORDER BY r.created_at, r.id LIMIT ?`+t.forUpdate(true), n)
	if err != nil {
		return nil, err
	}
	if err := t.loadTestAttempts(ctx, runs); err != nil {
		return nil, err
	}
	return runs, nil
}

// SetTestRunWebhookStatus writes the one column, so it needs no lock and
// cannot undo what another writer changed in the row.
func (t *tx) SetTestRunWebhookStatus(ctx context.Context, orgID, id, status string) error {
	if !uuids(orgID, id) {
		return notFound("set webhook status of test run %s", id)
	}
	return t.change(ctx, "set webhook status of test run "+id,
		`UPDATE test_runs SET webhook_status = ? WHERE org_id = ? AND id = ?`, status, orgID, id)
}
