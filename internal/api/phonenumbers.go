package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

type phoneNumberJSON struct {
	ID         string    `json:"id"`
	E164       string    `json:"e164"`
	SIPTrunkID *string   `json:"sipTrunkId"`
	AgentID    *string   `json:"agentId"`
	CreatedAt  timestamp `json:"createdAt"`
	UpdatedAt  timestamp `json:"updatedAt"`
}

func presentPhoneNumber(n model.PhoneNumber) phoneNumberJSON {
	return phoneNumberJSON{ID: n.ID, E164: n.E164, SIPTrunkID: n.SIPTrunkID, AgentID: n.AgentID, CreatedAt: ts(n.CreatedAt), UpdatedAt: ts(n.UpdatedAt)}
}

func (s *Server) listPhoneNumbers(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	f := store.PhoneNumberFilter{Page: q.storePage(p), AgentID: q.uuid("agentId")}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.PhoneNumbers.List(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, presentPhoneNumber), p, total)
}
