package web

import (
	"errors"
	"net/http"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
)

type keysData struct {
	Keys []model.APIKey
	// Secret is the key just created, shown on this one answer only.
	Secret  string
	Name    string
	MaxName int
	Errors  fieldErrors
	Pager   pager
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) {
	s.renderKeys(w, r, http.StatusOK, keysData{})
}

func (s *Server) renderKeys(w http.ResponseWriter, r *http.Request, status int, d keysData) {
	keys, err := s.Orgs.OrgKeys(r.Context(), orgID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The store lists an organization's keys whole: few, and paged here.
	pg, problems := adminPage(r)
	d.Keys, d.MaxName, d.Pager = pageOf(keys, pg), org.MaxKeyNameLen, newPager(r.URL, pg, len(keys), problems)
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "keys", "API keys", "keys", d)
}

// createKey issues a key and shows its secret in this answer, never again
// (not in a redirect's URL, not in a later page).
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	name := r.PostFormValue("name")
	token, _, err := s.Orgs.IssueKey(r.Context(), orgID(r), name)
	var bad *invalid.Error
	if errors.As(err, &bad) {
		s.renderKeys(w, r, http.StatusBadRequest, keysData{Name: name, Errors: errorsByField(bad.Fields)})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.renderKeys(w, r, http.StatusCreated, keysData{Secret: token})
}

func (s *Server) confirmRevokeKey(w http.ResponseWriter, r *http.Request) {
	k, err := s.orgKey(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Revoke key", "keys", confirmData{
		Question: "Revoke the key " + k.Prefix + "…? Requests with it are refused from now on.",
		Action:   "/keys/" + k.ID + "/revoke", Button: "Revoke key", Cancel: "/keys",
	})
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) {
	if err := s.Orgs.RevokeOrgKey(r.Context(), orgID(r), r.PathValue("id")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/keys", http.StatusSeeOther)
}

// orgKey is the organization's key the path names.
func (s *Server) orgKey(r *http.Request) (model.APIKey, error) {
	keys, err := s.Orgs.OrgKeys(r.Context(), orgID(r))
	if err != nil {
		return model.APIKey{}, err
	}
	for _, k := range keys {
		if k.ID == r.PathValue("id") {
			return k, nil
		}
	}
	return model.APIKey{}, errNotFound
}
