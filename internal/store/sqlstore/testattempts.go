package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-voice/parley/internal/model"
)

// testAttemptColumns is every column of test_attempts but position, which
// only orders them. Queries name the table a.
const testAttemptColumns = "a.id, a.org_id, a.run_id, a.test_case_id, a.test_case_name, a.attempt_number, " +
	"a.script, a.scoring_rubric, a.variables, a.status, a.passed, a.caller_agent_id, a.call_id, a.inbound_call_id, " +
	"a.reasoning, a.error_message, a.transcript, a.created_at, a.updated_at, a.started_at, a.completed_at"

// testAttemptOrder is case order, then attempt number.
const testAttemptOrder = "a.position, a.attempt_number, a.id"

func scanTestAttempt(r rowScanner) (model.TestAttempt, error) {
	var a model.TestAttempt
	err := r.Scan(&a.ID, &a.OrgID, &a.RunID, &a.TestCaseID, &a.TestCaseName, &a.AttemptNumber,
		&a.Script, &a.ScoringRubric, documentDest{&a.Variables}, &a.Status, &a.Passed, &a.CallerAgentID, &a.CallID,
		&a.InboundCallID, &a.Reasoning, &a.ErrorMessage, documentDest{&a.Transcript},
		timeDest{&a.CreatedAt}, timeDest{&a.UpdatedAt}, nullTimeDest{&a.StartedAt}, nullTimeDest{&a.CompletedAt})
	return a, err
}

// attemptDocs is an attempt's JSON columns, encoded.
type attemptDocs struct{ variables, transcript string }

// attemptWrite prepares a to be written, as callWrite does a call: times
// in UTC to the millisecond, CreatedAt (with create) and UpdatedAt now when
// unset, empty documents rather than nil ones. Ids that are not UUIDs name
// nothing, which is ErrNotFound.
func attemptWrite(a *model.TestAttempt, create bool) (attemptDocs, error) {
	if create {
		if a.ID == "" {
			a.ID = model.NewID()
		}
		a.CreatedAt = stamp(a.CreatedAt)
	}
	a.UpdatedAt = stamp(a.UpdatedAt)
	stampPtr(&a.StartedAt)
	stampPtr(&a.CompletedAt)
	if a.Variables == nil {
		a.Variables = map[string]any{}
	}
	if a.Transcript == nil {
		a.Transcript = []map[string]any{}
	}
	if !uuids(a.ID, a.OrgID, a.RunID, a.TestCaseID) || !optionalUUIDs(a.CallerAgentID, a.CallID, a.InboundCallID) {
		return attemptDocs{}, notFound("test attempt %s: organization %s, run %s, test case %s, caller agent %v, call %v, inbound call %v",
			a.ID, a.OrgID, a.RunID, a.TestCaseID, a.CallerAgentID, a.CallID, a.InboundCallID)
	}
	var d attemptDocs
	var err error
	if d.variables, err = document(a.Variables); err != nil {
		return d, fmt.Errorf("test attempt %s variables: %w", a.ID, err)
	}
	if d.transcript, err = document(a.Transcript); err != nil {
		return d, fmt.Errorf("test attempt %s transcript: %w", a.ID, err)
	}
	return d, nil
}

// attemptsPerInsert bounds one INSERT's rows: 22 values each, far below
// both engines' parameter limits.
const attemptsPerInsert = 100

// createTestAttempts inserts the run's attempts, a few INSERTs rather than
// one a row. position is the rank of the attempt's case among the cases in
// the order they first appear in attempts.
func (t *tx) createTestAttempts(ctx context.Context, r *model.TestRun) error {
	rank := map[string]int{}
	const row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	for start := 0; start < len(r.Attempts); start += attemptsPerInsert {
		batch := r.Attempts[start:min(start+attemptsPerInsert, len(r.Attempts))]
		rows := make([]string, len(batch))
		args := make([]any, 0, 22*len(batch))
		for i := range batch {
			a := &batch[i]
			a.OrgID, a.RunID = r.OrgID, r.ID
			d, err := attemptWrite(a, true)
			if err != nil {
				return fmt.Errorf("create %w", err)
			}
			pos, ok := rank[a.TestCaseID]
			if !ok {
				pos = len(rank)
				rank[a.TestCaseID] = pos
			}
			rows[i] = row
			args = append(args, a.ID, a.OrgID, a.RunID, pos, a.TestCaseID, a.TestCaseName, a.AttemptNumber,
				a.Script, a.ScoringRubric, d.variables, a.Status, a.Passed, a.CallerAgentID, a.CallID, a.InboundCallID,
				a.Reasoning, a.ErrorMessage, d.transcript, t.time(a.CreatedAt), t.time(a.UpdatedAt),
				t.nullTime(a.StartedAt), t.nullTime(a.CompletedAt))
		}
		_, err := t.exec(ctx, `INSERT INTO test_attempts (id, org_id, run_id, position, test_case_id, test_case_name,
			attempt_number, script, scoring_rubric, variables, status, passed, caller_agent_id, call_id, inbound_call_id,
			reasoning, error_message, transcript, created_at, updated_at, started_at, completed_at)
			VALUES `+strings.Join(rows, ", "), args...)
		if err != nil {
			return t.fail(err, "create attempts of test run %s", r.ID)
		}
	}
	return nil
}

// UpdateTestAttempt writes every column but the keys, the case's id, its
// position and created_at.
func (t *tx) UpdateTestAttempt(ctx context.Context, a *model.TestAttempt) error {
	if !uuids(a.OrgID, a.RunID, a.ID) {
		return notFound("update test attempt %s", a.ID)
	}
	d, err := attemptWrite(a, false)
	if err != nil {
		return fmt.Errorf("update %w", err)
	}
	return t.change(ctx, "update test attempt "+a.ID,
		`UPDATE test_attempts SET test_case_name = ?, attempt_number = ?, script = ?, scoring_rubric = ?,
		variables = ?, status = ?, passed = ?, caller_agent_id = ?, call_id = ?, inbound_call_id = ?, reasoning = ?,
		error_message = ?, transcript = ?, updated_at = ?, started_at = ?, completed_at = ?
		WHERE org_id = ? AND run_id = ? AND id = ?`,
		a.TestCaseName, a.AttemptNumber, a.Script, a.ScoringRubric, d.variables, a.Status, a.Passed,
		a.CallerAgentID, a.CallID, a.InboundCallID, a.Reasoning, a.ErrorMessage, d.transcript,
		t.time(a.UpdatedAt), t.nullTime(a.StartedAt), t.nullTime(a.CompletedAt), a.OrgID, a.RunID, a.ID)
}

// loadTestAttempts sets the attempts of runs (of any organizations), each
// run's in order: one query per organization among them (a few hundred
// runs at a time), so each reads the attempts index by its leading org_id.
func (t *tx) loadTestAttempts(ctx context.Context, runs []model.TestRun) error {
	byOrg := map[string][]string{}
	var orgs []string
	at := make(map[string]int, len(runs))
	for i := range runs {
		r := &runs[i]
		r.Attempts = []model.TestAttempt{}
		at[r.ID] = i
		if _, ok := byOrg[r.OrgID]; !ok {
			orgs = append(orgs, r.OrgID)
		}
		byOrg[r.OrgID] = append(byOrg[r.OrgID], r.ID)
	}
	for _, orgID := range orgs {
		err := uuidBatches(byOrg[orgID], func(batch []any, marks string) error {
			found, err := all(ctx, t, scanTestAttempt, "load test attempts",
				`SELECT `+testAttemptColumns+` FROM test_attempts a WHERE a.org_id = ? AND a.run_id IN (`+marks+`)
				ORDER BY a.run_id, `+testAttemptOrder, append([]any{orgID}, batch...)...)
			for _, a := range found {
				r := &runs[at[a.RunID]]
				r.Attempts = append(r.Attempts, a)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
