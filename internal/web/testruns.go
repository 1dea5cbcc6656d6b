package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
)

// A suite's run: its status, how each case fared, and every attempt with
// the judge's verdict and reasoning, its transcript and its calls. The
// page polls while the run is under way.

type runView struct {
	model.TestRun
	Suite    model.TestSuite
	Live     bool
	Results  []caseResult
	Attempts []attemptView
}

// caseResult is how one case fared over its attempts.
type caseResult struct {
	eval.CaseResult
}

// Rate is the share of finished attempts that passed, as a percentage
// ("" until one finishes).
func (c caseResult) Rate() string {
	if c.PassRate == nil {
		return ""
	}
	return fmt.Sprintf("%.0f%%", *c.PassRate*100)
}

// Flaky reports a case that passed some attempts and failed others.
func (c caseResult) Flaky() bool { return c.Passed > 0 && c.Failed > 0 }

type attemptView struct {
	model.TestAttempt
	Lines []line
}

// Verdict is the attempt's outcome in words.
func (a attemptView) Verdict() string {
	switch {
	case a.Status == model.AttemptPassed:
		return "passed"
	case a.Status == model.AttemptFailed && a.Passed == nil:
		return "failed without a verdict"
	case a.Status == model.AttemptFailed:
		return "failed"
	case a.Status == model.AttemptRunning:
		return "running"
	}
	return "waiting"
}

func newRunView(ts model.TestSuite, run model.TestRun) runView {
	v := runView{TestRun: run, Suite: ts, Live: run.Status == model.TestRunRunning}
	for _, cr := range eval.NewRunRecord(run, true).CaseResults {
		v.Results = append(v.Results, caseResult{cr})
	}
	for _, a := range run.Attempts {
		av := attemptView{TestAttempt: a}
		for _, e := range a.Transcript {
			av.Lines = append(av.Lines, transcriptLine(e))
		}
		v.Attempts = append(v.Attempts, av)
	}
	return v
}

// runView is the organization's run the path names, in its suite.
func (s *Server) runView(r *http.Request) (runView, error) {
	ts, err := s.suite(r)
	if err != nil {
		return runView{}, err
	}
	id := r.PathValue("runId")
	if !model.IsUUID(id) {
		return runView{}, errNotFound
	}
	run, err := s.TestSuites.GetRun(r.Context(), orgID(r), ts.ID, id)
	if err != nil {
		return runView{}, err
	}
	return newRunView(ts, run), nil
}

func (s *Server) showRun(w http.ResponseWriter, r *http.Request) {
	v, err := s.runView(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "testrun", v.Name, "suites", v)
}

// liveRunPartial is a running run's progress, which its page polls; once
// the run has ended the whole page reloads, without the cancel button.
func (s *Server) liveRunPartial(w http.ResponseWriter, r *http.Request) {
	v, err := s.runView(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !v.Live {
		w.Header().Set("HX-Refresh", "true")
	}
	s.renderPartial(w, r, "testrun", "liveRun", v)
}

// cancelRun stops a running run, as POST
// /v1/test-suites/{id}/runs/{runId}/cancel does: its unfinished attempts
// end failed, their calls hung up.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	v, err := s.runView(r)
	if err == nil {
		_, err = s.TestSuites.CancelRun(r.Context(), orgID(r), v.Suite.ID, v.ID)
	}
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.renderError(w, r, http.StatusConflict, "The run was not canceled: "+conflict.Message+".")
		return
	case err != nil:
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/suites/"+v.Suite.ID+"/runs/"+v.ID, http.StatusSeeOther)
}
