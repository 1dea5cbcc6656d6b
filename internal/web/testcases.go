package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/eval"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
)

// A suite's test cases: the case form (new and edit), deletion, and saving
// the tests the generator wrote.

type caseFormData struct {
	formState
	Suite    model.TestSuite
	ID       string
	Creating bool
}

var caseFields = func() []agentField {
	attempts := agentField{Name: "attempts", Label: "Attempts", Kind: kindInt, Step: 1,
		Help: "How many times a run tries the case, 1 to " + strconv.Itoa(eval.MaxAttempts) + "; blank: 1 for a new case. A case that passes some attempts and fails others is flaky."}
	attempts.Min, attempts.Max, attempts.HasMin, attempts.HasMax = between(1, eval.MaxAttempts)
	return []agentField{
		{Name: "name", Label: "Name", Kind: kindText, Required: true, MaxLen: eval.MaxNameLen, Help: "At most " + strconv.Itoa(eval.MaxNameLen) + " characters."},
		{Name: "script", Label: "Caller's script", Kind: kindTextarea, Required: true, MaxLen: eval.MaxScriptLen,
			Help: "What the simulated caller is told, in the second person: “You are a caller who …”. {{name}} placeholders take the variables below. At most " + strconv.Itoa(eval.MaxScriptLen) + " characters."},
		{Name: "scoringRubric", Label: "Scoring rubric", Kind: kindTextarea, Required: true, MaxLen: eval.MaxRubricLen,
			Help: "What the agent must do to pass, checkable from the transcript; the judge explains its verdict against it. At most " + strconv.Itoa(eval.MaxRubricLen) + " characters."},
		{Name: "variables", Label: "Variables (optional)", Kind: kindJSON, Placeholder: `{"name": "Ada"}`,
			Help: `A JSON object, such as {"name": "Ada"}, filling the script's placeholders; at most 100 entries.`},
		attempts,
	}
}()

// Fields are the form's inputs, by name.
func (d caseFormData) Fields() map[string]fieldView { return fieldsOf(d.formState, caseFields) }

// caseInput reads the case form: a blank input is left out of a new case
// and, editing, clears variables (the other fields cannot be cleared).
func caseInput(form url.Values, creating bool) (eval.CaseInput, *formReader) {
	fr := newFormReader(form, creating)
	in := eval.CaseInput{Name: fr.required("name"), Script: fr.required("script"), ScoringRubric: fr.required("scoringRubric"),
		Attempts: fr.number("attempts", true)}
	in.Variables = fr.jsonObject("variables", `must be a JSON object, such as {"name": "Ada"}`)
	return in, fr
}

func caseValues(c model.TestCase) map[string]string {
	v := map[string]string{"name": c.Name, "script": c.Script, "scoringRubric": c.ScoringRubric, "attempts": strconv.Itoa(c.Attempts)}
	if len(c.Variables) > 0 {
		b, _ := json.MarshalIndent(c.Variables, "", "  ") // plain data: cannot fail
		v["variables"] = string(b)
	}
	return v
}

// testCase is the organization's suite and its case the path names.
func (s *Server) testCase(r *http.Request) (model.TestSuite, model.TestCase, error) {
	ts, err := s.suite(r)
	if err != nil {
		return ts, model.TestCase{}, err
	}
	id := r.PathValue("caseId")
	if !model.IsUUID(id) {
		return ts, model.TestCase{}, errNotFound
	}
	c, err := s.TestSuites.GetCase(r.Context(), orgID(r), ts.ID, id)
	return ts, c, err
}

func (s *Server) newCase(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := caseFormData{Suite: ts, Creating: true}
	d.Values = map[string]string{"attempts": "1"}
	s.render(w, r, http.StatusOK, "testcase", "New test case", "suites", d)
}

func (s *Server) createCase(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	saveForm(s, w, r, true, caseInput,
		func(in eval.CaseInput) (model.TestCase, error) {
			return s.TestSuites.CreateCase(r.Context(), orgID(r), ts.ID, in)
		},
		func(model.TestCase) string { return "/suites/" + ts.ID + "?saved=1#cases" },
		func(values map[string]string, err error) {
			s.refuseCase(w, r, err, caseFormData{Suite: ts, Creating: true}, values)
		})
}

// refuseCase shows the case form again with the service's refusal.
func (s *Server) refuseCase(w http.ResponseWriter, r *http.Request, err error, d caseFormData, values map[string]string) {
	errs, msg, status, ok := evalRefusal(err)
	if !ok {
		s.failFind(w, r, err)
		return
	}
	d.Values, d.Errors, d.Message = values, errs, msg
	title := "New test case"
	if !d.Creating {
		title = "Edit test case"
	}
	s.render(w, r, status, "testcase", title, "suites", d)
}

func (s *Server) editCase(w http.ResponseWriter, r *http.Request) {
	ts, c, err := s.testCase(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := caseFormData{Suite: ts, ID: c.ID}
	d.Values = caseValues(c)
	s.render(w, r, http.StatusOK, "testcase", "Edit test case", "suites", d)
}

func (s *Server) updateCase(w http.ResponseWriter, r *http.Request) {
	ts, c, err := s.testCase(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	saveForm(s, w, r, false, caseInput,
		func(in eval.CaseInput) (model.TestCase, error) {
			return s.TestSuites.UpdateCase(r.Context(), orgID(r), ts.ID, c.ID, in)
		},
		func(model.TestCase) string { return "/suites/" + ts.ID + "#cases" },
		func(values map[string]string, err error) {
			s.refuseCase(w, r, err, caseFormData{Suite: ts, ID: c.ID}, values)
		})
}

func (s *Server) confirmDeleteCase(w http.ResponseWriter, r *http.Request) {
	ts, c, err := s.testCase(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	base := "/suites/" + ts.ID
	s.render(w, r, http.StatusOK, "confirm", "Delete "+c.Name, "suites", confirmData{
		Question: "Delete the test case “" + c.Name + "”? Runs that tried it keep their attempts.",
		Action:   base + "/cases/" + c.ID + "/delete", Button: "Delete test case", Cancel: base + "#cases",
	})
}

func (s *Server) deleteCase(w http.ResponseWriter, r *http.Request) {
	ts, c, err := s.testCase(r)
	if err == nil {
		err = s.TestSuites.DeleteCase(r.Context(), orgID(r), ts.ID, c.ID)
	}
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/suites/"+ts.ID+"#cases", http.StatusSeeOther)
}

// saveGenerated saves the generated tests ticked on the suite's page as
// test cases, all or none. The form carries every test's name, script and
// rubric in order, and keep lists the places of the ticked ones.
func (s *Server) saveGenerated(w http.ResponseWriter, r *http.Request) {
	ts, err := s.suite(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !s.parseForm(w, r) {
		return
	}
	names, scripts, rubrics := r.PostForm["name"], r.PostForm["script"], r.PostForm["scoringRubric"]
	var (
		ins      []eval.CaseInput
		problems []string
	)
	for _, k := range r.PostForm["keep"] {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(names) || i >= len(scripts) || i >= len(rubrics) {
			problems = append(problems, "keep: names no generated test")
			continue
		}
		for _, v := range []string{names[i], scripts[i], rubrics[i]} {
			if p := invalid.Text(v); p != "" {
				problems = append(problems, "test "+strconv.Itoa(i+1)+": "+p)
			}
		}
		ins = append(ins, eval.CaseInput{Name: opt.Value(strings.TrimSpace(names[i])), Script: opt.Value(strings.TrimSpace(scripts[i])),
			ScoringRubric: opt.Value(strings.TrimSpace(rubrics[i]))})
	}
	if len(problems) == 0 {
		if _, err = s.TestSuites.CreateCases(r.Context(), orgID(r), ts.ID, ins); err == nil {
			http.Redirect(w, r, "/suites/"+ts.ID+"?saved="+strconv.Itoa(len(ins))+"#cases", http.StatusSeeOther)
			return
		}
		errs, msg, _, ok := evalRefusal(err)
		if !ok {
			s.failFind(w, r, err)
			return
		}
		if msg != "" {
			problems = append(problems, msg)
		}
		for name, msgs := range errs {
			for _, m := range msgs {
				problems = append(problems, name+": "+m)
			}
		}
	}
	// The tests are shown again, to be saved once the problem is solved.
	d := suiteData{Conversation: r.PostForm.Get("previousMessages")}
	for i := 0; i < min(len(names), len(scripts), len(rubrics)); i++ {
		d.Generated = append(d.Generated, eval.GeneratedTest{Name: names[i], Script: scripts[i], ScoringRubric: rubrics[i]})
	}
	d.Generate.Message = "No test case was saved: " + strings.Join(problems, "; ")
	s.renderSuite(w, r, http.StatusBadRequest, d)
}
