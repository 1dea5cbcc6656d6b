package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/suppression"
)

// The do-not-call list (suppressions): search, add one number, import a
// CSV file of them, delete. No campaign dials a number on it, and the API
// refuses calls to it.

// maxSuppressionQueryLen bounds the search, as GET /v1/suppressions' q.
const maxSuppressionQueryLen = 64

type suppressionListData struct {
	formState
	Filter       store.SuppressionFilter
	Suppressions []model.Suppression
	pager        // its Problems are the list query's broken parameters
	// Notice says what the last add or import did.
	Notice string
	// ImportLines are an imported file's refused lines; ImportError why
	// the import was refused otherwise.
	ImportLines []lineError
	ImportError string
}

var suppressionFields = []agentField{
	{Name: "number", Label: "Number", Kind: kindText, Required: true, MaxLen: 16, Placeholder: "+14155550100", Help: "In E.164 form."},
	{Name: "reason", Label: "Reason (optional)", Kind: kindText, MaxLen: suppression.MaxReasonLen, Help: "At most " + strconv.Itoa(suppression.MaxReasonLen) + " characters, such as “asked not to be called”."},
}

// Fields are the add form's inputs, by name.
func (d suppressionListData) Fields() map[string]fieldView {
	return fieldsOf(d.formState, suppressionFields)
}

func suppressionFilter(values url.Values) (store.SuppressionFilter, []string) {
	q := &listQuery{v: values}
	f := store.SuppressionFilter{Page: q.page()}
	if v := values.Get("q"); invalid.Text(v) != "" || invalid.Len(v) > maxSuppressionQueryLen {
		q.bad("q", "must be at most 64 characters of text")
	} else {
		f.Query = v
	}
	return f, q.problems
}

func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) {
	d := suppressionListData{}
	q := r.URL.Query()
	switch {
	case q.Has("imported"):
		n, _ := strconv.Atoi(q.Get("imported"))
		known, _ := strconv.Atoi(q.Get("known"))
		d.Notice = strconv.Itoa(n) + " number" + plural(n) + " added to the list"
		if known > 0 {
			d.Notice += "; " + strconv.Itoa(known) + " " + were(known) + " on it already"
		}
		d.Notice += "."
	case q.Get("added") == "1":
		d.Notice = "Added to the list."
	case q.Get("added") == "0":
		d.Notice = "That number was on the list already."
	}
	s.renderSuppressions(w, r, http.StatusOK, d)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func (s *Server) renderSuppressions(w http.ResponseWriter, r *http.Request, status int, d suppressionListData) {
	f, problems := suppressionFilter(r.URL.Query())
	list, total, err := s.Suppressions.List(r.Context(), orgID(r), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Filter, d.Suppressions = f, list
	d.pager = newPager(&url.URL{Path: "/suppressions", RawQuery: keepQuery(r.URL.Query(), "q", "sortDir", "pageSize")}, f.Page, total, problems)
	if len(problems) > 0 && status == http.StatusOK {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "suppressions", "Do not call", "suppressions", d)
}

// keepQuery is the query's keys named, encoded: a page's links keep its
// filter but not a notice.
func keepQuery(values url.Values, keys ...string) string {
	kept := url.Values{}
	for _, k := range keys {
		if values.Has(k) {
			kept.Set(k, values.Get(k))
		}
	}
	return kept.Encode()
}

// addSuppression adds a number, as POST /v1/suppressions does: a number on
// the list already is no error.
func (s *Server) addSuppression(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, true)
	in := suppression.Input{Number: fr.required("number"), Reason: fr.text("reason")}
	err := fr.err()
	if err == nil {
		var created bool
		if _, created, err = s.Suppressions.Create(r.Context(), orgID(r), in); err == nil {
			next := "/suppressions?added=0"
			if created {
				next = "/suppressions?added=1"
			}
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	d := suppressionListData{}
	s.refuseForm(w, r, &d.formState, err, "number", func(status int) {
		d.Values = fr.values
		s.renderSuppressions(w, r, status, d)
	})
}

// importSuppressions adds every number of a CSV file. The whole file is
// checked first, each line by the service's rules: one bad line refuses
// the file, and every bad line is named.
func (s *Server) importSuppressions(w http.ResponseWriter, r *http.Request) {
	ctx, org := r.Context(), orgID(r)
	refuse := func(lines []lineError, why string) {
		s.renderSuppressions(w, r, http.StatusBadRequest, suppressionListData{ImportLines: lines, ImportError: why})
	}
	f, err := csvFile(r, "file")
	if err == nil && f == nil {
		refuse(nil, "Choose a CSV file of numbers.")
		return
	}
	var rows []suppressionRow
	if err == nil {
		rows, err = parseSuppressionCSV(f, checkSuppression)
		f.Close()
	}
	if err != nil {
		lines, ok := csvRefusal(err)
		if !ok {
			s.fail(w, r, err)
			return
		}
		refuse(lines, "")
		return
	}
	added, known := 0, 0
	for _, row := range rows {
		in := suppression.Input{Number: opt.Value(row.Number)}
		if row.Reason != "" {
			in.Reason = opt.Value(row.Reason)
		}
		_, created, err := s.Suppressions.Create(ctx, org, in)
		if err != nil {
			if _, ok := csvRefusal(err); ok {
				// Checked above by the same rules: only a change of them lands here.
				refuse(nil, "The import stopped at line "+strconv.Itoa(row.Line)+" ("+err.Error()+"); the "+strconv.Itoa(added)+" new number"+plural(added)+" before it "+were(added)+" added.")
				return
			}
			s.fail(w, r, err)
			return
		}
		if created {
			added++
		} else {
			known++
		}
	}
	http.Redirect(w, r, "/suppressions?imported="+strconv.Itoa(added)+"&known="+strconv.Itoa(known), http.StatusSeeOther)
}

// checkSuppression is POST /v1/suppressions' rules for one entry of an
// import: the text every store can hold (opt.Decode's check on a JSON
// body), then suppression's own.
func checkSuppression(number, reason string) []invalid.Field {
	var l invalid.List
	if p := invalid.Text(number); p != "" {
		l.Add("number", "%s", p)
	}
	if p := invalid.Text(reason); p != "" {
		l.Add("reason", "%s", p)
	}
	err := l.Err()
	if err == nil {
		in := suppression.Input{Reason: opt.Value(reason)}
		if number != "" {
			in.Number = opt.Value(number)
		}
		err = in.Check()
	}
	var bad *invalid.Error
	if errors.As(err, &bad) {
		return bad.Fields
	}
	return nil
}

func (s *Server) confirmDeleteSuppression(w http.ResponseWriter, r *http.Request) {
	sp, err := s.suppressionOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+sp.Number, "suppressions", confirmData{
		Question: "Take " + sp.Number + " off the do-not-call list? Campaigns may call it again.",
		Action:   "/suppressions/" + sp.ID + "/delete", Button: "Take off the list", Cancel: "/suppressions",
	})
}

func (s *Server) deleteSuppression(w http.ResponseWriter, r *http.Request) {
	sp, err := s.suppressionOf(r)
	if err == nil {
		err = s.Suppressions.Delete(r.Context(), orgID(r), sp.ID)
	}
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/suppressions", http.StatusSeeOther)
}

// suppressionOf is the organization's entry the path names.
func (s *Server) suppressionOf(r *http.Request) (model.Suppression, error) {
	id := r.PathValue("id")
	if !model.IsUUID(id) {
		return model.Suppression{}, errNotFound
	}
	return s.Suppressions.Get(r.Context(), orgID(r), id)
}
