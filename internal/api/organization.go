package api

import (
	"net/http"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
)

type organizationJSON struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	ConcurrencyLimit int       `json:"concurrencyLimit"`
	InboundReserve   int       `json:"inboundReservePercent"`
	RecordingDays    *int      `json:"recordingRetentionDays"`
	TranscriptDays   *int      `json:"transcriptRetentionDays"`
	WebhookSigning   bool      `json:"webhookSigningEnabled"`
	CreatedAt        timestamp `json:"createdAt"`
	UpdatedAt        timestamp `json:"updatedAt"`
}

func presentOrg(o model.Organization) organizationJSON {
	return organizationJSON{
		ID: o.ID, Name: o.Name, ConcurrencyLimit: o.ConcurrencyLimit, InboundReserve: o.InboundReservePercent,
		RecordingDays: o.RecordingRetentionDays, TranscriptDays: o.TranscriptRetentionDays, WebhookSigning: len(o.WebhookSecret) > 0,
		CreatedAt: ts(o.CreatedAt), UpdatedAt: ts(o.UpdatedAt),
	}
}

func (s *Server) getOrganization(w http.ResponseWriter, r *http.Request) {
	o, err := s.Orgs.Get(r.Context(), orgID(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentOrg(o))
}

func (s *Server) updateOrganization(w http.ResponseWriter, r *http.Request) {
	var in org.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	o, err := s.Orgs.Update(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, presentOrg(o))
}

// webhookSecretJSON carries a new signing secret, shown this once.
type webhookSecretJSON struct {
	Secret string `json:"secret"`
}

func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	sec, err := s.Orgs.RotateWebhookSecret(r.Context(), orgID(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, webhookSecretJSON{Secret: sec})
}

func (s *Server) deleteWebhookSecret(w http.ResponseWriter, r *http.Request) {
	if err := s.Orgs.DeleteWebhookSecret(r.Context(), orgID(r)); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
