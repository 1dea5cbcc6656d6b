package eval

import (
	"github.com/parley-voice/parley/internal/model"
)

// SuiteRecord is a test suite as the API answers it.
type SuiteRecord struct {
	ID          string          `json:"id"`
	AgentID     string          `json:"agentId"`
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	CreatedAt   model.Timestamp `json:"createdAt"`
	UpdatedAt   model.Timestamp `json:"updatedAt"`
}

// NewSuiteRecord presents s.
func NewSuiteRecord(s model.TestSuite) SuiteRecord {
	return SuiteRecord{ID: s.ID, AgentID: s.AgentID, Name: s.Name, Description: s.Description,
		CreatedAt: model.Timestamp(s.CreatedAt), UpdatedAt: model.Timestamp(s.UpdatedAt)}
}

// CaseRecord is a test case as the API answers it.
type CaseRecord struct {
	ID            string          `json:"id"`
	TestSuiteID   string          `json:"testSuiteId"`
	Name          string          `json:"name"`
	Script        string          `json:"script"`
	ScoringRubric string          `json:"scoringRubric"`
	Variables     map[string]any  `json:"variables"`
	Attempts      int             `json:"attempts"`
	CreatedAt     model.Timestamp `json:"createdAt"`
	UpdatedAt     model.Timestamp `json:"updatedAt"`
}

// NewCaseRecord presents c.
func NewCaseRecord(c model.TestCase) CaseRecord {
	vars := c.Variables
	if vars == nil {
		vars = map[string]any{}
	}
	return CaseRecord{ID: c.ID, TestSuiteID: c.SuiteID, Name: c.Name, Script: c.Script, ScoringRubric: c.ScoringRubric,
		Variables: vars, Attempts: c.Attempts, CreatedAt: model.Timestamp(c.CreatedAt), UpdatedAt: model.Timestamp(c.UpdatedAt)}
}

// RunRecord is a test run as the API answers it and test_run.completed
// delivers it. Attempts is present only when they were asked for.
type RunRecord struct {
	ID           string           `json:"id"`
	TestSuiteID  string           `json:"testSuiteId"`
	AgentID      string           `json:"agentId"`
	Name         string           `json:"name"`
	Mode         string           `json:"mode"`
	Status       string           `json:"status"`
	TotalTests   int              `json:"totalTests"`
	PassedTests  int              `json:"passedTests"`
	FailedTests  int              `json:"failedTests"`
	ErrorMessage *string          `json:"errorMessage"`
	CaseResults  []CaseResult     `json:"caseResults,omitempty"`
	CreatedAt    model.Timestamp  `json:"createdAt"`
	UpdatedAt    model.Timestamp  `json:"updatedAt"`
	StartedAt    *model.Timestamp `json:"startedAt"`
	CompletedAt  *model.Timestamp `json:"completedAt"`
	Attempts     []AttemptRecord  `json:"attempts,omitempty"`
}

// CaseResult is how one case fared over its attempts in a run: a case that
// passes 3 of 5 attempts is flaky, and shows as such.
type CaseResult struct {
	TestCaseID   string   `json:"testCaseId"`
	TestCaseName string   `json:"testCaseName"`
	Attempts     int      `json:"attempts"`
	Passed       int      `json:"passed"`
	Failed       int      `json:"failed"`
	PassRate     *float64 `json:"passRate"` // passed / finished attempts; null until one finishes
}

// AttemptRecord is one attempt as the API answers it.
type AttemptRecord struct {
	ID            string           `json:"id"`
	TestCaseID    string           `json:"testCaseId"`
	TestCaseName  string           `json:"testCaseName"`
	AttemptNumber int              `json:"attemptNumber"`
	Mode          string           `json:"mode"`
	Status        string           `json:"status"`
	Passed        *bool            `json:"passed"`
	CallID        *string          `json:"callId"`
	InboundCallID *string          `json:"inboundCallId"`
	Reasoning     *string          `json:"reasoning"`
	ErrorMessage  *string          `json:"errorMessage"`
	Transcript    []map[string]any `json:"transcript"`
	CreatedAt     model.Timestamp  `json:"createdAt"`
	StartedAt     *model.Timestamp `json:"startedAt"`
	CompletedAt   *model.Timestamp `json:"completedAt"`
}

// NewRunRecord presents r, with its attempts when withAttempts (r must
// have been read with them). The case results need the attempts; a run
// read without them has none.
func NewRunRecord(r model.TestRun, withAttempts bool) RunRecord {
	out := RunRecord{
		ID: r.ID, TestSuiteID: r.SuiteID, AgentID: r.AgentID, Name: r.Name, Mode: r.Mode, Status: r.Status,
		TotalTests: r.TotalTests, PassedTests: r.PassedTests, FailedTests: r.FailedTests, ErrorMessage: r.ErrorMessage,
		CreatedAt: model.Timestamp(r.CreatedAt), UpdatedAt: model.Timestamp(r.UpdatedAt),
		StartedAt: model.TimestampPtr(r.StartedAt), CompletedAt: model.TimestampPtr(r.CompletedAt),
	}
	if !withAttempts {
		return out
	}
	out.CaseResults = caseResults(r.Attempts)
	out.Attempts = make([]AttemptRecord, len(r.Attempts))
	for i, a := range r.Attempts {
		out.Attempts[i] = newAttemptRecord(a, r.Mode)
	}
	return out
}

func newAttemptRecord(a model.TestAttempt, mode string) AttemptRecord {
	tr := a.Transcript
	if tr == nil {
		tr = []map[string]any{}
	}
	return AttemptRecord{
		ID: a.ID, TestCaseID: a.TestCaseID, TestCaseName: a.TestCaseName, AttemptNumber: a.AttemptNumber,
		Mode: mode, Status: a.Status, Passed: a.Passed, CallID: a.CallID, InboundCallID: a.InboundCallID,
		Reasoning: a.Reasoning, ErrorMessage: a.ErrorMessage, Transcript: tr,
		CreatedAt: model.Timestamp(a.CreatedAt), StartedAt: model.TimestampPtr(a.StartedAt),
		CompletedAt: model.TimestampPtr(a.CompletedAt),
	}
}

// caseResults groups attempts by case, in the run's case order.
func caseResults(attempts []model.TestAttempt) []CaseResult {
	out := []CaseResult{}
	index := map[string]int{}
	for _, a := range attempts {
		i, ok := index[a.TestCaseID]
		if !ok {
			i = len(out)
			index[a.TestCaseID] = i
			out = append(out, CaseResult{TestCaseID: a.TestCaseID, TestCaseName: a.TestCaseName})
		}
		cr := &out[i]
		cr.Attempts++
		switch a.Status {
		case model.AttemptPassed:
			cr.Passed++
		case model.AttemptFailed:
			cr.Failed++
		}
	}
	for i := range out {
		if done := out[i].Passed + out[i].Failed; done > 0 {
			rate := float64(out[i].Passed) / float64(done)
			out[i].PassRate = &rate
		}
	}
	return out
}

// counts recomputes a run's counters from its attempts.
func counts(r *model.TestRun) {
	r.TotalTests, r.PassedTests, r.FailedTests = len(r.Attempts), 0, 0
	for _, a := range r.Attempts {
		switch a.Status {
		case model.AttemptPassed:
			r.PassedTests++
		case model.AttemptFailed:
			r.FailedTests++
		}
	}
}
