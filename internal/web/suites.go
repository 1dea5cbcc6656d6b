package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Test suites: the list, the suite form (new and edit) and deletion. The suite's own page (cases, generation, runs) is in
// suite.go; its cases in testcases.go; its runs in testruns.go.

// suiteRow is a suite in the list, with its agent's name.
type suiteRow struct {
	model.TestSuite
	Agent string
}

type suiteListData struct {
	Filter store.TestSuiteFilter
	Suites []suiteRow
	pager  // its Problems are the list query's broken parameters
	Agents []option
}

var suiteFields = []agentField{
	{Name: "name", Label: "Name", Kind: kindText, Required: true, MaxLen: eval.MaxNameLen, Help: "At most " + strconv.Itoa(eval.MaxNameLen) + " characters."},
	{Name: "agentId", Label: "Agent under test", Kind: kindAgent, Required: true, Help: "The agent every case of the suite calls."},
	{Name: "description", Label: "Description (optional)", Kind: kindTextarea, MaxLen: eval.MaxDescriptionLen, Help: "At most " + strconv.Itoa(eval.MaxDescriptionLen) + " characters."},
}

// suiteFilter reads the list's query: the API's agentId and paging, and a
// name search as the agent list has.
func suiteFilter(values url.Values) (store.TestSuiteFilter, []string) {
	q := &listQuery{v: values}
	f := store.TestSuiteFilter{Page: q.page()}
	q.uuid("agentId", &f.AgentID)
	if v := values.Get("q"); invalid.Text(v) != "" || invalid.Len(v) > maxAgentQueryLen {
		q.bad("q", "must be at most 128 characters of text")
	} else {
		f.Query = v
	}
	return f, q.problems
}

func (s *Server) listSuites(w http.ResponseWriter, r *http.Request) {
	d := suiteListData{}
	f, problems := suiteFilter(r.URL.Query())
	suites, total, err := s.TestSuites.ListSuites(r.Context(), orgID(r), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.Agents, err = s.agentOptions(r.Context(), orgID(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	d.Filter, d.pager = f, newPager(r.URL, f.Page, total, problems)
	for _, ts := range suites {
		d.Suites = append(d.Suites, suiteRow{TestSuite: ts, Agent: label(d.Agents, &ts.AgentID)})
	}
	status := http.StatusOK
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "suites", "Test suites", "suites", d)
}

func listPageURL(path string, q url.Values, page int) string {
	q.Set("page", strconv.Itoa(page))
	return path + "?" + q.Encode()
}

// agentOptions are every agent of the organization, by name: a suite form's
// choices (allPages says why all) and the suite list's agent names.
func (s *Server) agentOptions(ctx context.Context, orgID string) ([]option, error) {
	as, err := allPages(func(p store.Page) ([]agent.View, int, error) {
		return s.Agents.List(ctx, orgID, store.AgentFilter{Page: p, SortBy: store.SortName})
	})
	if err != nil {
		return nil, err
	}
	out := make([]option, len(as))
	for i, a := range as {
		out[i] = option{a.ID, a.Name}
	}
	return out, nil
}

func suiteInput(form url.Values, creating bool) (eval.SuiteInput, *formReader) {
	fr := newFormReader(form, creating)
	return eval.SuiteInput{Name: fr.required("name"), AgentID: fr.required("agentId"), Description: fr.text("description")}, fr
}

func (s *Server) createSuite(w http.ResponseWriter, r *http.Request) {
	saveForm(s, w, r, true, suiteInput,
		func(in eval.SuiteInput) (model.TestSuite, error) {
			return s.TestSuites.CreateSuite(r.Context(), orgID(r), in)
		},
		func(ts model.TestSuite) string { return "/suites/" + ts.ID },
		func(values map[string]string, err error) {
			d := suiteFormData{Creating: true}
			d.Values = values
			s.suiteFormFailed(w, r, d, err)
		})
}

func (s *Server) suiteFormFailed(w http.ResponseWriter, r *http.Request, d suiteFormData, err error) {
	s.refuseForm(w, r, &d.formState, err, "test suite", func(status int) { s.renderSuiteForm(w, r, status, d) })
}

// suiteFormData is the suite form, new or edit.
type suiteFormData struct {
	formState
	ID       string
	Name     string // the suite's stored name, editing
	Creating bool
	Agents   []option
}

// Fields are the form's inputs, by name.
func (d suiteFormData) Fields() map[string]fieldView {
	return fieldsOf(d.formState, suiteFields, d.Agents...)
}

func (s *Server) newSuite(w http.ResponseWriter, r *http.Request) {
	d := suiteFormData{Creating: true}
	d.Values = map[string]string{"agentId": r.URL.Query().Get("agentId")}
	s.renderSuiteForm(w, r, http.StatusOK, d)
}

// suite is the organization's suite the path's id names.
func (s *Server) suite(r *http.Request) (model.TestSuite, error) {
	id := r.PathValue("id")
	if !model.IsUUID(id) {
		return model.TestSuite{}, errNotFound
	}
	return s.TestSuites.GetSuite(r.Context(), orgID(r), id)
}

func (s *Server) editSuite(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := suiteFormData{ID: ts.ID, Name: ts.Name}
	d.Values = map[string]string{"name": ts.Name, "agentId": ts.AgentID}
	if ts.Description != nil {
		d.Values["description"] = *ts.Description
	}
	s.renderSuiteForm(w, r, http.StatusOK, d)
}

func (s *Server) renderSuiteForm(w http.ResponseWriter, r *http.Request, status int, d suiteFormData) {
	var err error
	if d.Agents, err = s.agentOptions(r.Context(), orgID(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	title := "New test suite"
	if !d.Creating {
		title = "Edit " + d.Name
	}
	s.render(w, r, status, "suiteform", title, "suites", d)
}

func (s *Server) updateSuite(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	saveForm(s, w, r, false, suiteInput,
		func(in eval.SuiteInput) (model.TestSuite, error) {
			return s.TestSuites.UpdateSuite(r.Context(), orgID(r), ts.ID, in)
		},
		func(model.TestSuite) string { return "/suites/" + ts.ID },
		func(values map[string]string, err error) {
			d := suiteFormData{ID: ts.ID, Name: ts.Name}
			d.Values = values
			s.suiteFormFailed(w, r, d, err)
		})
}

func (s *Server) confirmDeleteSuite(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+ts.Name, "suites", confirmData{
		Question: "Delete the test suite “" + ts.Name + "” with its test cases and the history of its runs?",
		Action:   "/suites/" + ts.ID + "/delete", Button: "Delete test suite", Cancel: "/suites/" + ts.ID,
	})
}

func (s *Server) deleteSuite(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err == nil {
		err = s.TestSuites.DeleteSuite(r.Context(), orgID(r), ts.ID)
	}
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.renderError(w, r, http.StatusConflict, "The test suite was not deleted: "+conflict.Message+".")
		return
	case err != nil:
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/suites", http.StatusSeeOther)
}
