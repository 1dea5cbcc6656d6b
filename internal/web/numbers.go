package web

import (
	"context"
	"net/http"
	"net/url"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/phonenumber"
	"github.com/parley-voice/parley/internal/store"
)

// numberRow is a phone number in the list, with its trunk's and agent's names.
type numberRow struct {
	model.PhoneNumber
	Trunk, Agent string
}

func (s *Server) listNumbers(w http.ResponseWriter, r *http.Request) {
	pg, problems := adminPage(r)
	numbers, total, err := s.PhoneNumbers.List(r.Context(), orgID(r), store.PhoneNumberFilter{Page: pg})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	trunks, agents, err := s.numberLabels(r.Context(), orgID(r), numbers)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := make([]numberRow, len(numbers))
	for i, n := range numbers {
		rows[i] = numberRow{PhoneNumber: n, Trunk: label(trunks, n.SIPTrunkID), Agent: label(agents, n.AgentID)}
	}
	s.render(w, r, listStatus(problems), "numbers", "Phone numbers", "numbers", struct {
		Numbers []numberRow
		Pager   pager
	}{rows, newPager(r.URL, pg, total, problems)})
}

// label is the name of the choice id names ("" for none).
func label(choices []option, id *string) string {
	if id == nil {
		return ""
	}
	for _, c := range choices {
		if c.Value == *id {
			return c.Label
		}
	}
	return *id
}

// numberLabels are the names of the trunks and agents the numbers name:
// a page of the list needs only its own agents, however many there are.
func (s *Server) numberLabels(ctx context.Context, orgID string, numbers []model.PhoneNumber) (trunks, agents []option, err error) {
	var ids []string
	for _, n := range numbers {
		if n.AgentID != nil {
			ids = append(ids, *n.AgentID)
		}
	}
	as, err := s.Agents.BatchGet(ctx, orgID, ids)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range as {
		agents = append(agents, option{a.ID, a.Name})
	}
	ts, err := allPages(func(p store.Page) ([]model.SIPTrunk, int, error) { return s.SIPTrunks.List(ctx, orgID, p) })
	if err != nil {
		return nil, nil, err
	}
	for _, t := range ts {
		trunks = append(trunks, option{t.ID, t.FriendlyName})
	}
	return trunks, agents, nil
}

// numberChoices are the organization's trunks and agents, all of them,
// for a number's references.
func (s *Server) numberChoices(ctx context.Context, orgID string) (trunks, agents []option, err error) {
	ts, err := allPages(func(p store.Page) ([]model.SIPTrunk, int, error) { return s.SIPTrunks.List(ctx, orgID, p) })
	if err != nil {
		return nil, nil, err
	}
	for _, t := range ts {
		trunks = append(trunks, option{t.ID, t.FriendlyName})
	}
	if agents, err = s.agentOptions(ctx, orgID); err != nil {
		return nil, nil, err
	}
	return trunks, agents, nil
}

// numberFormData is the phone number form.
type numberFormData struct {
	formState
	ID       string
	Creating bool
	Saved    bool
	Trunks   []option
	Agents   []option
}

var numberFields = []agentField{
	{Name: "e164", Label: "Number", Kind: kindText, Required: true, MaxLen: 16, Placeholder: "+14155550100", Help: "In E.164 form: + and up to 15 digits. A number exists once in this deployment."},
	{Name: "sipTrunkId", Label: "SIP trunk", Kind: kindTrunk, Help: "The trunk the number's calls arrive on and leave by."},
	{Name: "agentId", Label: "Agent", Kind: kindAgent, Help: "The agent that answers calls to this number. To move it to another agent, unassign it first."},
}

// Fields are the form's inputs, by name.
func (d numberFormData) Fields() map[string]fieldView {
	choices := map[kind][]option{kindTrunk: d.Trunks, kindAgent: d.Agents}
	out := map[string]fieldView{}
	for _, f := range numberFields {
		out[f.Name] = d.field(f, choices[f.Kind]...)
	}
	return out
}

func numberInput(form url.Values, creating bool) (phonenumber.Input, *formReader) {
	fr := newFormReader(form, creating)
	return phonenumber.Input{E164: fr.required("e164"), SIPTrunkID: fr.text("sipTrunkId"), AgentID: fr.text("agentId")}, fr
}

func numberValues(n model.PhoneNumber) numberFormData {
	d := numberFormData{ID: n.ID}
	d.Values = map[string]string{"e164": n.E164}
	if n.SIPTrunkID != nil {
		d.Values["sipTrunkId"] = *n.SIPTrunkID
	}
	if n.AgentID != nil {
		d.Values["agentId"] = *n.AgentID
	}
	return d
}

func (s *Server) newNumber(w http.ResponseWriter, r *http.Request) {
	d := numberFormData{Creating: true}
	d.Values = map[string]string{"agentId": r.URL.Query().Get("agentId")}
	s.renderNumberForm(w, r, http.StatusOK, d)
}

func (s *Server) createNumber(w http.ResponseWriter, r *http.Request) {
	saveForm(s, w, r, true, numberInput,
		func(in phonenumber.Input) (model.PhoneNumber, error) {
			return s.PhoneNumbers.Create(r.Context(), orgID(r), in)
		},
		func(n model.PhoneNumber) string { return "/numbers/" + n.ID + "?saved=1" },
		func(values map[string]string, err error) {
			d := numberFormData{Creating: true}
			d.Values = values
			s.numberFormFailed(w, r, d, err)
		})
}

func (s *Server) editNumber(w http.ResponseWriter, r *http.Request) {
	n, err := s.PhoneNumbers.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := numberValues(n)
	d.Saved = r.URL.Query().Get("saved") == "1"
	s.renderNumberForm(w, r, http.StatusOK, d)
}

func (s *Server) updateNumber(w http.ResponseWriter, r *http.Request) {
	n, err := s.PhoneNumbers.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err) // another organization's number is not found, form or not
		return
	}
	saveForm(s, w, r, false, numberInput,
		func(in phonenumber.Input) (model.PhoneNumber, error) {
			return s.PhoneNumbers.Update(r.Context(), orgID(r), n.ID, in)
		},
		func(model.PhoneNumber) string { return "/numbers/" + n.ID + "?saved=1" },
		func(values map[string]string, err error) {
			d := numberFormData{ID: n.ID}
			d.Values = values
			s.numberFormFailed(w, r, d, err)
		})
}

func (s *Server) numberFormFailed(w http.ResponseWriter, r *http.Request, d numberFormData, err error) {
	s.refuseForm(w, r, &d.formState, err, "number", func(status int) { s.renderNumberForm(w, r, status, d) })
}

func (s *Server) renderNumberForm(w http.ResponseWriter, r *http.Request, status int, d numberFormData) {
	var err error
	if d.Trunks, d.Agents, err = s.numberChoices(r.Context(), orgID(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	title := "New phone number"
	if !d.Creating {
		title = "Edit " + d.Values["e164"]
	}
	s.render(w, r, status, "number", title, "numbers", d)
}

func (s *Server) confirmDeleteNumber(w http.ResponseWriter, r *http.Request) {
	n, err := s.PhoneNumbers.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+n.E164, "numbers", confirmData{
		Question: "Delete the phone number " + n.E164 + "? Calls to it are no longer answered.",
		Action:   "/numbers/" + n.ID + "/delete", Button: "Delete number", Cancel: "/numbers/" + n.ID,
	})
}

func (s *Server) deleteNumber(w http.ResponseWriter, r *http.Request) {
	if err := s.PhoneNumbers.Delete(r.Context(), orgID(r), r.PathValue("id")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/numbers", http.StatusSeeOther)
}
