package eval

import (
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// Limits of suites, cases and runs, in characters where they are text.
const (
	MaxNameLen        = 128
	MaxDescriptionLen = 2000
	MaxScriptLen      = 10000
	MaxRubricLen      = 5000
	MaxAttempts       = 10
	MaxCasesPerSuite  = 100
	// DefaultCallSeconds bounds an attempt's call when the agent under
	// test sets no maxConversationDurationSeconds of its own.
	DefaultCallSeconds  = 300
	maxVariablesEntries = 100
)

// SuiteInput is a test suite create or partial-update request.
type SuiteInput struct {
	Name        opt.Field[string] `json:"name"`
	AgentID     opt.Field[string] `json:"agentId"`
	Description opt.Field[string] `json:"description"`
}

func (in *SuiteInput) check(creating bool) *invalid.List {
	var l invalid.List
	requiredText(&l, "name", in.Name, creating, MaxNameLen)
	switch {
	case in.AgentID.Null:
		l.Add("agentId", "must not be null")
	case creating && !in.AgentID.Set:
		l.Add("agentId", "is required")
	case in.AgentID.Present() && !model.IsUUID(in.AgentID.V):
		l.Add("agentId", "must be a UUID")
	}
	if in.Description.Present() && invalid.Len(in.Description.V) > MaxDescriptionLen {
		l.Add("description", "must be at most %d characters", MaxDescriptionLen)
	}
	return &l
}

func (in *SuiteInput) apply(s *model.TestSuite) {
	if in.Name.Present() {
		s.Name = in.Name.V
	}
	if in.AgentID.Present() {
		s.AgentID = in.AgentID.V
	}
	if in.Description.Set {
		s.Description = in.Description.Ptr()
	}
}

// CaseInput is a test case create or partial-update request.
type CaseInput struct {
	Name          opt.Field[string]         `json:"name"`
	Script        opt.Field[string]         `json:"script"`
	ScoringRubric opt.Field[string]         `json:"scoringRubric"`
	Variables     opt.Field[map[string]any] `json:"variables"`
	Attempts      opt.Field[int]            `json:"attempts"`
}

func (in *CaseInput) check(creating bool) error {
	var l invalid.List
	requiredText(&l, "name", in.Name, creating, MaxNameLen)
	requiredText(&l, "script", in.Script, creating, MaxScriptLen)
	requiredText(&l, "scoringRubric", in.ScoringRubric, creating, MaxRubricLen)
	if in.Variables.Present() && len(in.Variables.V) > maxVariablesEntries {
		l.Add("variables", "must have at most %d entries", maxVariablesEntries)
	}
	switch {
	case in.Attempts.Null:
		l.Add("attempts", "must not be null")
	case in.Attempts.Set && (in.Attempts.V < 1 || in.Attempts.V > MaxAttempts):
		l.Add("attempts", "must be 1 to %d", MaxAttempts)
	}
	return l.Err()
}

func (in *CaseInput) apply(c *model.TestCase) {
	if in.Name.Present() {
		c.Name = in.Name.V
	}
	if in.Script.Present() {
		c.Script = in.Script.V
	}
	if in.ScoringRubric.Present() {
		c.ScoringRubric = in.ScoringRubric.V
	}
	if in.Variables.Set {
		c.Variables = in.Variables.V // null clears
	}
	if in.Attempts.Present() {
		c.Attempts = in.Attempts.V
	}
}

// RunInput is a POST /test-suites/{id}/runs request; every field is
// optional.
type RunInput struct {
	Name        opt.Field[string]   `json:"name"`
	Mode        opt.Field[string]   `json:"mode"`
	TestCaseIDs opt.Field[[]string] `json:"testCaseIds"`
}

func (in *RunInput) check() error {
	var l invalid.List
	if in.Name.Null || (in.Name.Present() && invalid.IsBlank(in.Name.V)) {
		l.Add("name", "must not be empty")
	} else if in.Name.Present() && invalid.Len(in.Name.V) > MaxNameLen {
		l.Add("name", "must be at most %d characters", MaxNameLen)
	}
	if in.Mode.Null || (in.Mode.Set && in.Mode.V != model.TestModeCall && in.Mode.V != model.TestModeText) {
		l.Add("mode", "must be one of call, text")
	}
	if in.TestCaseIDs.Null || (in.TestCaseIDs.Set && len(in.TestCaseIDs.V) == 0) {
		l.Add("testCaseIds", "must list at least one test case")
	}
	for i, id := range in.TestCaseIDs.V {
		if !model.IsUUID(id) {
			l.Add(invalid.Index("testCaseIds", i), "must be a UUID")
		}
	}
	return l.Err()
}

// requiredText checks a required, non-null, non-blank text field of at
// most max characters.
func requiredText(l *invalid.List, name string, f opt.Field[string], creating bool, max int) {
	switch {
	case f.Null:
		l.Add(name, "must not be null")
	case creating && !f.Set:
		l.Add(name, "is required")
	case f.Present() && invalid.IsBlank(f.V):
		l.Add(name, "must not be empty")
	case f.Present() && invalid.Len(f.V) > max:
		l.Add(name, "must be at most %d characters", max)
	}
}
