package api

import (
	"net/http"
	"strings"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/suppression"
)

type suppressionJSON struct {
	ID        string    `json:"id"`
	Number    string    `json:"number"`
	Reason    *string   `json:"reason"`
	CreatedAt timestamp `json:"createdAt"`
}

func presentSuppression(s model.Suppression) suppressionJSON {
	return suppressionJSON{ID: s.ID, Number: s.Number, Reason: s.Reason, CreatedAt: ts(s.CreatedAt)}
}

// maxSuppressionQueryLen bounds q: a part of a number.
const maxSuppressionQueryLen = 64

// createSuppression answers 201 with a new entry, 200 with the one the
// number has already.
func (s *Server) createSuppression(w http.ResponseWriter, r *http.Request) {
	var in suppression.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	entry, created, err := s.Suppressions.Create(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeData(w, status, presentSuppression(entry))
}

func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	// Numbers hold no spaces: a space is an unencoded "+".
	f := store.SuppressionFilter{Page: q.storePage(p), Query: strings.ReplaceAll(q.string("q", maxSuppressionQueryLen), " ", "+")}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.Suppressions.List(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, presentSuppression), p, total)
}
