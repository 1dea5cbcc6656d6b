package api

import (
	"net/http"
	"regexp"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms"
)

// messagingConnectionJSON never carries the auth token, only whether one is set.
type messagingConnectionJSON struct {
	ID                  string  `json:"id"`
	Name                *string `json:"name"`
	Provider            string  `json:"provider"`
	BaseURL             string  `json:"baseUrl"`
	AccountSID          string  `json:"accountSid"`
	AuthTokenSet        bool    `json:"authTokenSet"`
	FromNumber          *string `json:"fromNumber"`
	MessagingServiceSID *string `json:"messagingServiceSid"`
	// InboundURL is what to set as the carrier's "a message comes in"
	// webhook of the connection's numbers (null: no public URL known).
	InboundURL *string   `json:"inboundUrl"`
	CreatedAt  timestamp `json:"createdAt"`
	UpdatedAt  timestamp `json:"updatedAt"`
}

func (s *Server) presentMessagingConnection(c model.MessagingConnection) messagingConnectionJSON {
	out := messagingConnectionJSON{
		ID: c.ID, Name: c.Name, Provider: c.Provider, BaseURL: c.BaseURL, AccountSID: c.AccountSID,
		AuthTokenSet: len(c.AuthToken) > 0, FromNumber: c.FromNumber, MessagingServiceSID: c.MessagingServiceSID,
		CreatedAt: ts(c.CreatedAt), UpdatedAt: ts(c.UpdatedAt),
	}
	if u := s.Messages.InboundURL(c); u != "" {
		out.InboundURL = &u
	}
	return out
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
