package web

import (
	"net/http"
	"net/url"
)

// saveForm is the POST of every record form: read the posted form into the
// domain service's input, act, and go to next of what was saved; a refusal,
// the reader's or the service's, goes to failed with the values as posted,
// to draw the form again.
func saveForm[In, T any](s *Server, w http.ResponseWriter, r *http.Request, creating bool,
	read func(url.Values, bool) (In, *formReader), act func(In) (T, error), next func(T) string,
	failed func(values map[string]string, err error)) {
	if !s.parseForm(w, r) {
		return
	}
	in, fr := read(r.PostForm, creating)
	err := fr.err()
	if err == nil {
		var saved T
		if saved, err = act(in); err == nil {
			http.Redirect(w, r, next(saved), http.StatusSeeOther)
			return
		}
	}
	failed(fr.values, err)
}

// parseForm reads a POST's form, answering 400 (false) when it cannot be
// read: the first step of every form handler.
func (s *Server) parseForm(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		s.renderError(w, r, http.StatusBadRequest, "The form could not be read.")
		return false
	}
	return true
}

// refuseForm draws a form again (render, with status 400) with what the
// service refused in err: the errors at their fields and its message, or
// "The <noun> was not saved". Any other error (not found, a failure) is not
// the form's to show.
func (s *Server) refuseForm(w http.ResponseWriter, r *http.Request, st *formState, err error, noun string, render func(status int)) {
	errs, msg, ok := refusal(err)
	if !ok {
		s.failFind(w, r, err)
		return
	}
	st.Errors, st.Message = errs, msg
	if st.Message == "" {
		st.Message = "The " + noun + " was not saved: correct the fields marked below."
	}
	render(http.StatusBadRequest)
}
