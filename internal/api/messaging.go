package api

import (
	"net/http"
	"regexp"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms"
)

// messagingConnectionJSON never carries the auth token, only whether one is set.
type messagingConnectionJSON struct {
	ID                  string    `json:"id"`
	Name                *string   `json:"name"`
	Provider            string    `json:"provider"`
	BaseURL             string    `json:"baseUrl"`
	AccountSID          string    `json:"accountSid"`
	AuthTokenSet        bool      `json:"authTokenSet"`
	FromNumber          *string   `json:"fromNumber"`
	MessagingServiceSID *string   `json:"messagingServiceSid"`
	CreatedAt           timestamp `json:"createdAt"`
	UpdatedAt           timestamp `json:"updatedAt"`
}

func presentMessagingConnection(c model.MessagingConnection) messagingConnectionJSON {
	return messagingConnectionJSON{
		ID: c.ID, Name: c.Name, Provider: c.Provider, BaseURL: c.BaseURL, AccountSID: c.AccountSID,
		AuthTokenSet: len(c.AuthToken) > 0, FromNumber: c.FromNumber, MessagingServiceSID: c.MessagingServiceSID,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
	}
}

// connectionID is the shape of a messaging connection id; anything else
// names nothing (404), like a malformed UUID elsewhere.
var connectionID = regexp.MustCompile(`^` + sms.IDPrefix + `_[0-9a-f]{32}$`)

func pathConnectionID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !connectionID.MatchString(id) {
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return "", false
	}
	return id, true
}

func (s *Server) createMessagingConnection(w http.ResponseWriter, r *http.Request) {
	var in sms.ConnectionInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	c, err := s.MessagingConnections.Create(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, presentMessagingConnection(c))
}

func (s *Server) listMessagingConnections(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	sp := q.storePage(p)
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.MessagingConnections.List(r.Context(), orgID(r), sp)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, presentMessagingConnection), p, total)
}

func (s *Server) getMessagingConnection(w http.ResponseWriter, r *http.Request) {
	id, ok := pathConnectionID(w, r)
	if !ok {
		return
	}
	c, err := s.MessagingConnections.Get(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentMessagingConnection(c))
}

func (s *Server) deleteMessagingConnection(w http.ResponseWriter, r *http.Request) {
	id, ok := pathConnectionID(w, r)
	if !ok {
		return
	}
	if err := s.MessagingConnections.Delete(r.Context(), orgID(r), id); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
