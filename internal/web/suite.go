package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// suiteData is a suite's page: its cases, the form generating tests from
// a description (with what it wrote), the form starting a run, and a page
// of its runs.
type suiteData struct {
	model.TestSuite
	Agent      string
	AgentGone  bool
	Cases      []model.TestCase
	Runs       []model.TestRun
	RunTotal   int
	Page, Last int
	RunErrors  []string
	PrevURL    string
	NextURL    string
	Saved      int

	Generate  formState
	Generated []eval.GeneratedTest
	// Conversation is the generation so far (previousMessages, as JSON),
	// sent back with the next request to refine it.
	Conversation string

	Run      formState
	RunCases []string
}

var (
	generateFields = []agentField{
		{Name: "prompt", Label: "Describe the scenarios to test", Kind: kindTextarea, Required: true, MaxLen: eval.MaxGeneratePrompt,
			Help: "For example: “callers booking a table, one of them for a fully booked evening”. At most " + strconv.Itoa(eval.MaxGeneratePrompt) + " characters. The agent's prompt is sent along."},
	}
	runFields = []agentField{
		{Name: "name", Label: "Run name (optional)", Kind: kindText, MaxLen: eval.MaxNameLen, Help: "Blank: “Run of” and the suite's name."},
		{Name: "mode", Label: "Mode", Kind: kindEnum, Required: true, Options: []string{model.TestModeCall, model.TestModeText},
			Help: "call: every attempt is a real phone call over the loopback trunk, through the whole speech pipeline. text: the simulated caller and the agent exchange text; fast."},
		{Name: "testCaseIds", Label: "Test cases", Kind: kindCases, Help: "Tick the cases to run; with none ticked, every case runs."},
	}
)

// GenerateFields and RunFields are the two forms' inputs, by name.
func (d suiteData) GenerateFields() map[string]fieldView { return fieldsOf(d.Generate, generateFields) }

func (d suiteData) RunFields() map[string]fieldView {
	cases := make([]option, len(d.Cases))
	for i, c := range d.Cases {
		cases[i] = option{c.ID, c.Name}
	}
	form := agentFormData{Values: formValues{Text: d.Run.Values, Lists: map[string][]string{"testCaseIds": d.RunCases}},
		Errors: d.Run.Errors, Choices: map[kind][]option{kindCases: cases}}
	out := map[string]fieldView{}
	for _, f := range runFields {
		out[f.Name] = form.Field(f)
	}
	return out
}

func (s *Server) showSuite(w http.ResponseWriter, r *http.Request) {
	d := suiteData{}
	d.Saved, _ = strconv.Atoi(r.URL.Query().Get("saved"))
	s.renderSuite(w, r, http.StatusOK, d)
}

func (s *Server) renderSuite(w http.ResponseWriter, r *http.Request, status int, d suiteData) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	ctx, org := r.Context(), orgID(r)
	d.TestSuite = ts
	switch a, err := s.Agents.Get(ctx, org, ts.AgentID); {
	case errors.Is(err, store.ErrNotFound):
		d.AgentGone = true
	case err != nil:
		s.fail(w, r, err)
		return
	default:
		d.Agent = a.Name
	}
	if d.Cases, _, err = s.TestSuites.ListCases(ctx, org, ts.ID, store.Page{Number: 1, Size: eval.MaxCasesPerSuite, SortDir: store.Asc}); err != nil {
		s.fail(w, r, err)
		return
	}
	q := &listQuery{v: r.URL.Query()}
	p := q.page()
	if d.Runs, d.RunTotal, err = s.TestSuites.ListRuns(ctx, org, ts.ID, store.TestRunFilter{Page: p}); err != nil {
		s.fail(w, r, err)
		return
	}
	d.Page, d.RunErrors = p.Number, q.problems
	d.Last = max(1, (d.RunTotal+p.Size-1)/p.Size)
	if p.Number > 1 {
		d.PrevURL = listPageURL("/suites/"+ts.ID, r.URL.Query(), p.Number-1) + "#runs"
	}
	if p.Number < d.Last {
		d.NextURL = listPageURL("/suites/"+ts.ID, r.URL.Query(), p.Number+1) + "#runs"
	}
	if len(q.problems) > 0 && status == http.StatusOK {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "suite", ts.Name, "suites", d)
}

// generateTests asks the language model for test cases from a
// description, as POST /v1/test-suites/{id}/generate-tests does, and shows
// them to be saved or refined; nothing is saved yet.
func (s *Server) generateTests(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, true)
	in := eval.GenerateInput{Prompt: fr.required("prompt")}
	conversation, ok := fr.raw("previousMessages")
	if ok && conversation != "" {
		var previous []eval.PreviousMessage
		if err := opt.Decode([]byte(conversation), &previous); err != nil {
			fr.problems.Add("previousMessages", "is not the conversation this page sent: generate afresh")
		} else {
			in.PreviousMessages = opt.Value(previous)
		}
	}
	d := suiteData{Conversation: conversation}
	err = fr.err()
	if err == nil {
		var out eval.Generated
		if out, err = s.TestSuites.GenerateTests(r.Context(), orgID(r), ts.ID, in); err == nil {
			b, err := json.Marshal(out.Messages)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			d.Generated, d.Conversation = out.Tests, string(b)
			s.renderSuite(w, r, http.StatusOK, d)
			return
		}
	}
	errs, msg, status, ok := evalRefusal(err)
	if !ok {
		s.failFind(w, r, err)
		return
	}
	d.Generate.Values, d.Generate.Errors, d.Generate.Message = fr.values, errs, msg
	if m := errs["previousMessages"]; len(m) > 0 && msg == "" {
		d.Generate.Message = "previousMessages: " + m[0]
	}
	s.renderSuite(w, r, status, d)
}

// startRun starts a run of the suite, as POST /v1/test-suites/{id}/runs
// does, and opens its page.
func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, true)
	in := eval.RunInput{Name: fr.text("name"), Mode: fr.required("mode")}
	ids := r.PostForm["testCaseIds"]
	for i, id := range ids {
		if p := invalid.Text(id); p != "" {
			fr.problems.Add(invalid.Index("testCaseIds", i), "%s", p)
		}
	}
	if len(ids) > 0 {
		in.TestCaseIDs = opt.Value(ids)
	}
	err = fr.err()
	if err == nil {
		var run model.TestRun
		if run, err = s.TestSuites.StartRun(r.Context(), orgID(r), ts.ID, in); err == nil {
			http.Redirect(w, r, "/suites/"+ts.ID+"/runs/"+run.ID, http.StatusSeeOther)
			return
		}
	}
	errs, msg, status, ok := evalRefusal(err)
	if !ok {
		s.failFind(w, r, err)
		return
	}
	d := suiteData{RunCases: ids}
	d.Run.Values, d.Run.Errors, d.Run.Message = fr.values, errs, msg
	s.renderSuite(w, r, status, d)
}

// evalRefusal is refusal with the language model's unavailability too (no
// model configured, or it failed), and the status each answers.
func evalRefusal(err error) (errs fieldErrors, message string, status int, ok bool) {
	var (
		noModel  *eval.UnavailableError
		conflict *invalid.Conflict
	)
	switch {
	case errors.As(err, &noModel):
		return fieldErrors{}, noModel.Message, http.StatusServiceUnavailable, true
	case errors.As(err, &conflict):
		return fieldErrors{}, conflict.Message, http.StatusConflict, true
	}
	errs, message, ok = refusal(err)
	return errs, message, http.StatusBadRequest, ok
}
