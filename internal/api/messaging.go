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
