package model

import "time"

// Test run modes: how each attempt talks to the agent under test.
const (
	// TestModeCall: every attempt is a real phone call over the loopback
	// trunk, through the whole speech pipeline (the default).
	TestModeCall = "call"
	// TestModeText: no audio; the simulated caller and the agent exchange
	// text through the same model, prompt and tools. Fast iteration.
	TestModeText = "text"
)

// Test run statuses.
const (
	TestRunRunning   = "running"
	TestRunCompleted = "completed"
	TestRunCanceled  = "canceled"
)

// Test attempt statuses. Pending and running are not final.
const (
	AttemptPending = "pending"
	AttemptRunning = "running"
	AttemptPassed  = "passed"
	AttemptFailed  = "failed"
)

// TestSuite is a set of test cases run against one agent. AgentID is kept
// when the agent is deleted (like a call's), and runs then refuse to start.
type TestSuite struct {
	ID          string
	OrgID       string
	AgentID     string
	Name        string
	Description *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// TestCase is one scenario: the simulated caller follows Script (rendered
// with Variables), and the judge scores the agent against ScoringRubric.
// Attempts is how many times a run tries it.
type TestCase struct {
	ID            string
	OrgID         string
	SuiteID       string
	Name          string
	Script        string
	ScoringRubric string
	Variables     map[string]any
	Attempts      int
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TestRun is one run of a suite: an attempt per case and attempt number,
// snapshotted when the run starts. The counters count final attempts. The
// run is driven by the node holding its lease (LeaseOwner), which renews
// it while it works; a run whose lease lapsed is taken over by another.
type TestRun struct {
	ID           string
	OrgID        string
	SuiteID      string
	AgentID      string // the agent under test, as the suite had it at start
	Name         string
	Mode         string // TestModeCall or TestModeText
	Status       string // TestRunRunning, TestRunCompleted or TestRunCanceled
	TotalTests   int
	PassedTests  int
	FailedTests  int
	ErrorMessage *string // why the run ended early (canceled, ...)

	// WebhookURL is where test_run.completed goes, captured when the run
	// ended; a run ended with a URL and no WebhookStatus awaits delivery.
	WebhookURL    *string
	WebhookStatus *string

	LeaseOwner     *string
	LeaseExpiresAt *time.Time

	CreatedAt   time.Time
	UpdatedAt   time.Time
	StartedAt   *time.Time
	CompletedAt *time.Time

	// Attempts, in case order then attempt number; loaded only on request.
	Attempts []TestAttempt
}

// TestAttempt is one try of one case in a run. The case's name, script,
// rubric and variables are copied in when the run starts, so editing or
// deleting the case does not change a run under way or its history.
type TestAttempt struct {
	ID            string
	OrgID         string
	RunID         string
	TestCaseID    string
	TestCaseName  string
	AttemptNumber int
	Script        string
	ScoringRubric string
	Variables     map[string]any
	Status        string // AttemptPending ... AttemptFailed
	Passed        *bool  // the judge's verdict (nil: none, e.g. the call failed)
	// CallerAgentID is the ephemeral simulated caller (a hidden agent) of a
	// call-mode attempt, deleted once the attempt is over.
	CallerAgentID *string
	CallID        *string // the simulated caller's leg (OUTBOUND)
	InboundCallID *string // the agent under test's leg (INBOUND)
	Reasoning     *string // the judge's reasoning
	ErrorMessage  *string // why the attempt failed without a verdict
	Transcript    []map[string]any
	CreatedAt     time.Time
	UpdatedAt     time.Time
	StartedAt     *time.Time
	CompletedAt   *time.Time
}

// Final reports whether the attempt is over.
func (a TestAttempt) Final() bool { return a.Status == AttemptPassed || a.Status == AttemptFailed }
