package eval

import (
	"context"
	"log/slog"

	"github.com/parley-voice/parley/internal/model"
)

// A test run's life in the log: one line when it starts and one when it
// finishes or is canceled, with its ids and counts. A run that finished
// with attempts that got no verdict (their call failed, the model did not
// answer) ends with a WARN line naming how many and the first reason: the
// run could not test what it was asked to. Failed verdicts are the run's
// result, not a fault: INFO; so is a cancel, which someone asked for.

// runAttrs are the ids and counts every run line carries.
func runAttrs(run model.TestRun) []slog.Attr {
	return []slog.Attr{
		slog.String("test_run_id", run.ID), slog.String("org_id", run.OrgID), slog.String("suite_id", run.SuiteID),
		slog.String("agent_id", run.AgentID), slog.String("mode", run.Mode), slog.String("status", run.Status),
		slog.Int("attempts", len(run.Attempts)),
	}
}

// logStarted: run was stored running, with its attempts.
func (r *Runner) logStarted(run model.TestRun) {
	r.log().LogAttrs(context.Background(), slog.LevelInfo, "test run started", runAttrs(run)...)
}

// logFinished: run ended (completed or canceled) with its attempts.
func (r *Runner) logFinished(run model.TestRun) {
	attrs := append(runAttrs(run), slog.Int("passed", run.PassedTests), slog.Int("failed", run.FailedTests))
	if run.StartedAt != nil && run.CompletedAt != nil {
		attrs = append(attrs, slog.Float64("duration_s", run.CompletedAt.Sub(*run.StartedAt).Seconds()))
	}
	if run.ErrorMessage != nil {
		attrs = append(attrs, slog.String("reason", *run.ErrorMessage))
	}
	errored, first := 0, ""
	for _, a := range run.Attempts {
		if a.Final() && a.ErrorMessage != nil {
			if errored == 0 {
				first = *a.ErrorMessage
			}
			errored++
		}
	}
	level, msg := slog.LevelInfo, "test run finished"
	switch {
	case run.Status == model.TestRunCanceled:
		msg = "test run canceled"
	case errored > 0:
		level, msg = slog.LevelWarn, "test run finished with errors"
		attrs = append(attrs, slog.Int("errored", errored), slog.String("error", first))
	}
	r.log().LogAttrs(context.Background(), level, msg, attrs...)
}

// log is the runner's log; the process's for a service without a runner.
func (r *Runner) log() *slog.Logger {
	if r == nil {
		return slog.Default()
	}
	r.init()
	return r.Logger
}
