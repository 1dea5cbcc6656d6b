package web

import (
	"bytes"
	"fmt"
	"net/http"
)

// renderPartial writes the template name of page alone, without the
// layout: the piece of a page that htmx polls and swaps in.
func (s *Server) renderPartial(w http.ResponseWriter, r *http.Request, page, name string, data any) {
	t, ok := s.pages[page]
	if !ok {
		s.fail(w, r, fmt.Errorf("no template for page %q", page))
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, view{Data: data}); err != nil {
		s.log.ErrorContext(r.Context(), "render partial", "page", page, "name", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}
