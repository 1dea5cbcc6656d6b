package web

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms"
)

// Messaging connections: the Twilio-compatible accounts agents text
// through. The auth token is write-only: pages say whether one is stored.

func (s *Server) listConnections(w http.ResponseWriter, r *http.Request) {
	pg, problems := adminPage(r)
	conns, total, err := s.MessagingConnections.List(r.Context(), orgID(r), pg)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, listStatus(problems), "connections", "Messaging connections", "connections", struct {
		Connections []model.MessagingConnection
		Pager       pager
	}{conns, newPager(r.URL, pg, total, problems)})
}

// connectionFormData is the connection form: its inputs, whether an auth
// token is stored, and where the carrier sends incoming texts.
type connectionFormData struct {
	formState
	ID              string
	Creating, Saved bool
	AuthToken       bool
	InboundURL      string
}

// Fields are the form's inputs, by name.
func (d connectionFormData) Fields() map[string]fieldView {
	out := map[string]fieldView{}
	for _, f := range connectionFields {
		var choices []option
		for _, o := range f.Options {
			choices = append(choices, option{o, o})
		}
		v := d.field(f, choices...)
		if f.Name == "authToken" {
			v.Control, v.Value = "password", ""
		}
		out[f.Name] = v
	}
	return out
}

var connectionFields = []agentField{
	{Name: "name", Label: "Name", Kind: kindText, MaxLen: sms.MaxNameLen, Help: "Optional; at most " + strconv.Itoa(sms.MaxNameLen) + " characters."},
	{Name: "provider", Label: "Provider", Kind: kindEnum, Required: true, Options: []string{sms.ProviderTwilio}},
	{Name: "baseUrl", Label: "API base URL", Kind: kindURL, Placeholder: sms.DefaultBaseURL, Help: "Any Twilio-compatible REST API; blank: " + sms.DefaultBaseURL + "."},
	{Name: "accountSid", Label: "Account SID", Kind: kindText, Required: true, MaxLen: sms.MaxSIDLen, Help: "At most " + strconv.Itoa(sms.MaxSIDLen) + " characters."},
	{Name: "authToken", Label: "Auth token", Kind: kindText, MaxLen: sms.MaxTokenLen, Help: "Write-only, at most " + strconv.Itoa(sms.MaxTokenLen) + " characters. Required for a new connection; blank keeps the stored one."},
	{Name: "fromNumber", Label: "From number", Kind: kindText, Placeholder: "+14155550100", Help: "The E.164 number texts are sent from; this or a messaging service SID is required."},
	{Name: "messagingServiceSid", Label: "Messaging service SID", Kind: kindText, MaxLen: sms.MaxSIDLen, Help: "Sends through a Twilio messaging service instead of one number."},
}

// connectionInput reads the connection form.
func connectionInput(form url.Values, creating bool) (sms.ConnectionInput, *formReader) {
	fr := newFormReader(form, creating)
	return sms.ConnectionInput{
		Name:                fr.text("name"),
		Provider:            fr.required("provider"),
		BaseURL:             fr.text("baseUrl"),
		AccountSID:          fr.required("accountSid"),
		AuthToken:           fr.secret("authToken"),
		FromNumber:          fr.text("fromNumber"),
		MessagingServiceSID: fr.text("messagingServiceSid"),
	}, fr
}

// connectionValues is a stored connection as the form shows it.
func (s *Server) connectionValues(c model.MessagingConnection) connectionFormData {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	d := connectionFormData{ID: c.ID, AuthToken: len(c.AuthToken) > 0, InboundURL: s.Messages.InboundURL(c)}
	d.Values = map[string]string{
		"name": str(c.Name), "provider": c.Provider, "baseUrl": c.BaseURL, "accountSid": c.AccountSID,
		"fromNumber": str(c.FromNumber), "messagingServiceSid": str(c.MessagingServiceSID),
	}
	return d
}

func (s *Server) newConnection(w http.ResponseWriter, r *http.Request) {
	d := connectionFormData{Creating: true}
	d.Values = map[string]string{"provider": sms.ProviderTwilio}
	s.renderConnectionForm(w, r, http.StatusOK, d)
}

func (s *Server) createConnection(w http.ResponseWriter, r *http.Request) {
	saveForm(s, w, r, true, connectionInput,
		func(in sms.ConnectionInput) (model.MessagingConnection, error) {
			return s.MessagingConnections.Create(r.Context(), orgID(r), in)
		},
		func(c model.MessagingConnection) string { return "/connections/" + c.ID + "?saved=1" },
		func(values map[string]string, err error) {
			d := connectionFormData{Creating: true}
			d.Values = values
			s.connectionFormFailed(w, r, d, err)
		})
}

func (s *Server) editConnection(w http.ResponseWriter, r *http.Request) {
	c, err := s.MessagingConnections.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := s.connectionValues(c)
	d.Saved = r.URL.Query().Get("saved") == "1"
	s.renderConnectionForm(w, r, http.StatusOK, d)
}

func (s *Server) updateConnection(w http.ResponseWriter, r *http.Request) {
	c, err := s.MessagingConnections.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err) // another organization's connection is not found, form or not
		return
	}
	saveForm(s, w, r, false, connectionInput,
		func(in sms.ConnectionInput) (model.MessagingConnection, error) {
			return s.MessagingConnections.Update(r.Context(), orgID(r), c.ID, in)
		},
		func(model.MessagingConnection) string { return "/connections/" + c.ID + "?saved=1" },
		func(values map[string]string, err error) {
			d := s.connectionValues(c)
			d.Values = values
			s.connectionFormFailed(w, r, d, err)
		})
}

func (s *Server) connectionFormFailed(w http.ResponseWriter, r *http.Request, d connectionFormData, err error) {
	s.refuseForm(w, r, &d.formState, err, "connection", func(status int) { s.renderConnectionForm(w, r, status, d) })
}

func (s *Server) renderConnectionForm(w http.ResponseWriter, r *http.Request, status int, d connectionFormData) {
	title := "New messaging connection"
	if !d.Creating {
		title = "Edit messaging connection"
		if n := d.Values["name"]; n != "" {
			title = "Edit " + n
		}
	}
	s.render(w, r, status, "connection", title, "connections", d)
}

func (s *Server) confirmDeleteConnection(w http.ResponseWriter, r *http.Request) {
	c, err := s.MessagingConnections.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete messaging connection", "connections", confirmData{
		Question: "Delete the messaging connection “" + connectionLabel(c) + "”? Agents using it can no longer send or receive texts.",
		Action:   "/connections/" + c.ID + "/delete", Button: "Delete connection", Cancel: "/connections/" + c.ID,
	})
}

func (s *Server) deleteConnection(w http.ResponseWriter, r *http.Request) {
	if err := s.MessagingConnections.Delete(r.Context(), orgID(r), r.PathValue("id")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/connections", http.StatusSeeOther)
}

// connectionLabel names a connection: its name, else its provider and
// account.
func connectionLabel(c model.MessagingConnection) string {
	if c.Name != nil {
		return *c.Name
	}
	return c.Provider + " " + c.AccountSID
}
