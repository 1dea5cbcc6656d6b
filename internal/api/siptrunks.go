package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/siptrunk"
)

// sipTrunkJSON never carries passwords, only whether one is set.
type sipTrunkJSON struct {
	ID                  string    `json:"id"`
	FriendlyName        string    `json:"friendlyName"`
	Host                *string   `json:"host"`
	Port                *int      `json:"port"`
	Transport           string    `json:"transport"`
	Username            *string   `json:"username"`
	PasswordSet         bool      `json:"passwordSet"`
	InboundUsername     *string   `json:"inboundUsername"`
	InboundPasswordSet  bool      `json:"inboundPasswordSet"`
	InboundAllowedCIDRs []string  `json:"inboundAllowedCidrs"`
	CreatedAt           timestamp `json:"createdAt"`
	UpdatedAt           timestamp `json:"updatedAt"`
}

func presentSIPTrunk(t model.SIPTrunk) sipTrunkJSON {
	return sipTrunkJSON{
		ID: t.ID, FriendlyName: t.FriendlyName, Host: t.Host, Port: t.Port, Transport: t.Transport,
		Username: t.Username, PasswordSet: len(t.Password) > 0, InboundUsername: t.InboundUsername,
		InboundPasswordSet: len(t.InboundPassword) > 0, InboundAllowedCIDRs: nonNil(t.InboundAllowedCIDRs),
		CreatedAt: ts(t.CreatedAt), UpdatedAt: ts(t.UpdatedAt),
	}
}

func (s *Server) createSIPTrunk(w http.ResponseWriter, r *http.Request) {
	var in siptrunk.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.SIPTrunks.Create(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentSIPTrunk(t))
}

func (s *Server) listSIPTrunks(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	sp := q.storePage(p)
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.SIPTrunks.List(r.Context(), orgID(r), sp)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, presentSIPTrunk), p, total)
}

func (s *Server) getSIPTrunk(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	t, err := s.SIPTrunks.Get(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentSIPTrunk(t))
}

func (s *Server) updateSIPTrunk(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var in siptrunk.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.SIPTrunks.Update(r.Context(), orgID(r), id, in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentSIPTrunk(t))
}

func (s *Server) deleteSIPTrunk(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	if err := s.SIPTrunks.Delete(r.Context(), orgID(r), id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
