package store

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// TestSuites persists test suites, their cases, runs and attempts.
// Deleting a suite deletes its cases, runs and attempts. A case's runs keep
// its attempts when the case is deleted (attempts carry a copy of it).
type TestSuites interface {
	CreateTestSuite(ctx context.Context, s *model.TestSuite) error
	GetTestSuite(ctx context.Context, orgID, id string) (model.TestSuite, error)
	// ListTestSuites pages the organization's suites (only AgentID's when
	// set) by creation time then id, newest first by default.
	ListTestSuites(ctx context.Context, orgID string, f TestSuiteFilter) ([]model.TestSuite, int, error)
	// UpdateTestSuite writes Name, Description, AgentID and UpdatedAt.
	UpdateTestSuite(ctx context.Context, s *model.TestSuite) error
	DeleteTestSuite(ctx context.Context, orgID, id string) error

	CreateTestCase(ctx context.Context, c *model.TestCase) error
	GetTestCase(ctx context.Context, orgID, suiteID, id string) (model.TestCase, error)
	// ListTestCases pages a suite's cases by creation time then id (p.SortDir;
	// default asc here: a suite reads in the order it was written). A zero
	// p.Size returns every case.
	ListTestCases(ctx context.Context, orgID, suiteID string, p Page) ([]model.TestCase, int, error)
	// UpdateTestCase writes every field but the ids and CreatedAt.
	UpdateTestCase(ctx context.Context, c *model.TestCase) error
	DeleteTestCase(ctx context.Context, orgID, suiteID, id string) error

	// CreateTestRun inserts r and every attempt in r.Attempts, which it
	// makes the run's (OrgID, RunID) and gives ids and times where unset.
	// The order in which the cases first appear in r.Attempts is the case
	// order the attempts read back in.
	CreateTestRun(ctx context.Context, r *model.TestRun) error
	// GetTestRun reads a run of the suite, with its attempts when
	// withAttempts (in case order, then attempt number).
	GetTestRun(ctx context.Context, orgID, suiteID, id string, withAttempts bool) (model.TestRun, error)
	// GetTestRunForUpdate reads a run (attempts included) to change it, the
	// row held until the transaction ends (PostgreSQL: FOR UPDATE).
	GetTestRunForUpdate(ctx context.Context, orgID, id string) (model.TestRun, error)
	// ListTestRuns pages a suite's runs by creation time then id, newest
	// first by default, with their attempts when f.WithAttempts.
	ListTestRuns(ctx context.Context, orgID, suiteID string, f TestRunFilter) ([]model.TestRun, int, error)
	// UpdateTestRun writes every field of r (found by OrgID and ID) but
	// the ids, CreatedAt and its attempts.
	UpdateTestRun(ctx context.Context, r *model.TestRun) error
	// UpdateTestAttempt writes every field of a (found by OrgID, RunID and
	// ID) but the ids (TestCaseID included) and CreatedAt.
	UpdateTestAttempt(ctx context.Context, a *model.TestAttempt) error
	// CountRunningTestRuns counts the suite's runs still running.
	CountRunningTestRuns(ctx context.Context, orgID, suiteID string) (int, error)

	// RunsToDrive returns running runs, across organizations, that node
	// owner must drive: its own (a restart picks them up at once), any
	// whose lease expired before now and any without a lease. At most n,
	// oldest first, attempts included. In a write transaction on
	// PostgreSQL the runs are locked and runs another transaction holds are
	// passed over, so two nodes never both take a run.
	RunsToDrive(ctx context.Context, owner string, now time.Time, n int) ([]model.TestRun, error)
	// RenewTestRunLeases extends until the lease of those of the runs ids
	// (across organizations) that are running and owned by owner, and
	// returns how many it renewed. A server names the runs it drives: a
	// lease is renewed only for work that is really going on. It leaves
	// UpdatedAt alone. An empty owner owns nothing.
	RenewTestRunLeases(ctx context.Context, owner string, ids []string, until time.Time) (int, error)
	// PendingTestRunWebhooks returns ended runs (not running) that have a
	// WebhookURL and no WebhookStatus, oldest created first, at most n
	// (attempts included); locked as RunsToDrive's are.
	PendingTestRunWebhooks(ctx context.Context, n int) ([]model.TestRun, error)
	// SetTestRunWebhookStatus records how test_run.completed went and
	// writes nothing else (not even UpdatedAt).
	SetTestRunWebhookStatus(ctx context.Context, orgID, id, status string) error
}

// TestSuiteFilter narrows a suite list.
type TestSuiteFilter struct {
	Page
	AgentID string
	// Query is a case-insensitive substring of the name; % and _ in it are
	// literal characters, not wildcards.
	Query string
}

// TestRunFilter pages a suite's runs by creation time then id.
type TestRunFilter struct {
	Page
	WithAttempts bool
}
