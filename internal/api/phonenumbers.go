package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/phonenumber"
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

func (s *Server) createPhoneNumber(w http.ResponseWriter, r *http.Request) {
	var in phonenumber.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	n, err := s.PhoneNumbers.Create(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentPhoneNumber(n))
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

func (s *Server) getPhoneNumber(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	n, err := s.PhoneNumbers.Get(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentPhoneNumber(n))
}

func (s *Server) updatePhoneNumber(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in phonenumber.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	n, err := s.PhoneNumbers.Update(r.Context(), orgID(r), id, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentPhoneNumber(n))
}

func (s *Server) deletePhoneNumber(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	if err := s.PhoneNumbers.Delete(r.Context(), orgID(r), id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
