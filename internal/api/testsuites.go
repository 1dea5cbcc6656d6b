package api

import (
	"bytes"
	"io"
	"net/http"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Test suites, their cases and runs, and test generation. Plain suite
// routes use the generic handlers; the nested ones read two path ids.

func (s *Server) listTestSuites(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	f := store.TestSuiteFilter{Page: q.storePage(p), AgentID: q.uuid("agentId")}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	items, total, err := s.TestSuites.ListSuites(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(items, eval.NewSuiteRecord), p, total)
}

func (s *Server) createTestCase(w http.ResponseWriter, r *http.Request) {
	suiteID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in eval.CaseInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	c, err := s.TestSuites.CreateCase(r.Context(), orgID(r), suiteID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, eval.NewCaseRecord(c))
}

func (s *Server) listTestCases(w http.ResponseWriter, r *http.Request) {
	suiteID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	q := newQuery(r)
	p := q.page()
	sp := store.Page{Number: p.Number, Size: p.Size, SortDir: q.enum("sortDir", store.Asc, store.Asc, store.Desc)}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	items, total, err := s.TestSuites.ListCases(r.Context(), orgID(r), suiteID, sp)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(items, eval.NewCaseRecord), p, total)
}

// casePath reads a test case route's suite and case ids.
func casePath(w http.ResponseWriter, r *http.Request) (suiteID, caseID string, ok bool) {
	return pathIDs(w, r, "id", "caseId")
}

func (s *Server) getTestCase(w http.ResponseWriter, r *http.Request) {
	suiteID, caseID, ok := casePath(w, r)
	if !ok {
		return
	}
	c, err := s.TestSuites.GetCase(r.Context(), orgID(r), suiteID, caseID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, eval.NewCaseRecord(c))
}

func (s *Server) updateTestCase(w http.ResponseWriter, r *http.Request) {
	suiteID, caseID, ok := casePath(w, r)
	if !ok {
		return
	}
	var in eval.CaseInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	c, err := s.TestSuites.UpdateCase(r.Context(), orgID(r), suiteID, caseID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, eval.NewCaseRecord(c))
}

func (s *Server) deleteTestCase(w http.ResponseWriter, r *http.Request) {
	suiteID, caseID, ok := casePath(w, r)
	if !ok {
		return
	}
	if err := s.TestSuites.DeleteCase(r.Context(), orgID(r), suiteID, caseID); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

// startTestRun starts a run; its body is optional (every field has a
// default), so an empty body is an empty object.
func (s *Server) startTestRun(w http.ResponseWriter, r *http.Request) {
	suiteID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var in eval.RunInput
	if err := opt.Decode(body, &in); err != nil {
		writeError(w, r, err)
		return
	}
	run, err := s.TestSuites.StartRun(r.Context(), orgID(r), suiteID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, eval.NewRunRecord(run, true))
}

func (s *Server) listTestRuns(w http.ResponseWriter, r *http.Request) {
	suiteID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	q := newQuery(r)
	p := q.page()
	f := store.TestRunFilter{Page: q.storePage(p), WithAttempts: q.bool("includeAttempts", false)}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	runs, total, err := s.TestSuites.ListRuns(r.Context(), orgID(r), suiteID, f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(runs, func(run model.TestRun) eval.RunRecord { return eval.NewRunRecord(run, f.WithAttempts) }), p, total)
}

// runPath reads a test run route's suite and run ids.
func runPath(w http.ResponseWriter, r *http.Request) (suiteID, runID string, ok bool) {
	return pathIDs(w, r, "id", "runId")
}

func (s *Server) getTestRun(w http.ResponseWriter, r *http.Request) {
	suiteID, runID, ok := runPath(w, r)
	if !ok {
		return
	}
	run, err := s.TestSuites.GetRun(r.Context(), orgID(r), suiteID, runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, eval.NewRunRecord(run, true))
}

func (s *Server) cancelTestRun(w http.ResponseWriter, r *http.Request) {
	suiteID, runID, ok := runPath(w, r)
	if !ok {
		return
	}
	run, err := s.TestSuites.CancelRun(r.Context(), orgID(r), suiteID, runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, eval.NewRunRecord(run, true))
}

func (s *Server) generateTests(w http.ResponseWriter, r *http.Request) {
	suiteID, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in eval.GenerateInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.TestSuites.GenerateTests(r.Context(), orgID(r), suiteID, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, out)
}
