package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/siptrunk"
)

// trunkRow is a trunk in the list, with its registration's live state.
type trunkRow struct {
	model.SIPTrunk
	Registration *model.RegistrationStatus
}

func (s *Server) listTrunks(w http.ResponseWriter, r *http.Request) {
	pg, problems := adminPage(r)
	trunks, total, err := s.SIPTrunks.List(r.Context(), orgID(r), pg)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows := make([]trunkRow, len(trunks))
	for i, t := range trunks {
		rows[i] = trunkRow{SIPTrunk: t, Registration: liveStatus(t)}
	}
	s.render(w, r, listStatus(problems), "trunks", "SIP trunks", "trunks", struct {
		Trunks []trunkRow
		Pager  pager
	}{rows, newPager(r.URL, pg, total, problems)})
}

// liveStatus is the trunk's registration state (nil: it does not register).
func liveStatus(t model.SIPTrunk) *model.RegistrationStatus {
	if t.Registration == nil {
		return nil
	}
	st := siptrunk.LiveStatus(t.Registration, t.RegistrationStatus, time.Now())
	return &st
}

// trunkFormData is the trunk form: the inputs, what is stored but not
// shown (passwords), and the registration's live state on edit.
type trunkFormData struct {
	formState
	ID       string
	Creating bool
	Saved    bool
	// Password, InboundPassword, RegistrationPassword: whether one is stored.
	Password, InboundPassword, RegistrationPassword bool
	Status                                          *model.RegistrationStatus
}

// Fields are the form's inputs, by name.
func (d trunkFormData) Fields() map[string]fieldView {
	out := map[string]fieldView{}
	for _, f := range trunkFields {
		var choices []option
		for _, o := range f.Options {
			choices = append(choices, option{o, o})
		}
		v := d.field(f, choices...)
		if strings.HasSuffix(strings.ToLower(f.Name), "password") {
			v.Control, v.Value = "password", ""
		}
		out[f.Name] = v
	}
	return out
}

var trunkFields = func() []agentField {
	port := agentField{Name: "port", Label: "Port", Kind: kindInt, Step: 1, Help: "1 to 65535; blank: the transport's default."}
	port.Min, port.Max, port.HasMin, port.HasMax = between(1, 65535)
	expires := agentField{Name: "registration.expiresSeconds", Label: "Registration lifetime (seconds)", Kind: kindInt, Step: 1,
		Help: "How long each registration asks to last: " + strconv.Itoa(siptrunk.MinExpiresSeconds) + " to " + strconv.Itoa(siptrunk.MaxExpiresSeconds) + "; blank: " + strconv.Itoa(siptrunk.DefaultExpiresSeconds) + " for a new one."}
	expires.Min, expires.Max, expires.HasMin, expires.HasMax = between(siptrunk.MinExpiresSeconds, siptrunk.MaxExpiresSeconds)
	credential := func(name, label, help string) agentField {
		return agentField{Name: name, Label: label, Kind: kindText, MaxLen: siptrunk.MaxCredentialLen, Help: help}
	}
	cps := agentField{Name: "callsPerSecond", Label: "Calls per second", Kind: kindFloat, Step: 0.1,
		Help: "Calls out through this trunk per second, across every server (carriers enforce one); 0: unlimited; blank: the server's --sip-trunk-cps."}
	cps.Min, cps.Max, cps.HasMin, cps.HasMax = between(0, siptrunk.MaxCallsPerSecond)
	return []agentField{
		{Name: "friendlyName", Label: "Name", Kind: kindText, Required: true, MaxLen: siptrunk.MaxNameLen, Help: "At most " + strconv.Itoa(siptrunk.MaxNameLen) + " characters."},
		{Name: "transport", Label: "Transport", Kind: kindEnum, Required: true, Options: []string{model.TransportUDP, model.TransportTCP, model.TransportTLS, model.TransportLoopback}, Help: "loopback: calls stay inside this server (testing); it has no host."},
		{Name: "host", Label: "Host", Kind: kindText, MaxLen: 253, Help: "The provider's host name or IP address, without scheme or port. Required unless the transport is loopback."},
		port,
		credential("username", "Username", "For calls out, at most 256 characters."),
		credential("password", "Password", "Write-only, at most 256 characters. Blank keeps the stored one."),
		credential("inboundUsername", "Inbound username", "Callers must authenticate with this username (digest), if set."),
		credential("inboundPassword", "Inbound password", "Write-only. Blank keeps the stored one."),
		cps,
		{Name: "inboundAllowedCidrs", Label: "Inbound allowed addresses", Kind: kindTextarea, Help: "One IP address or CIDR (such as 203.0.113.0/24) a line, at most " + strconv.Itoa(siptrunk.MaxAllowedCIDRs) + "; blank: any."},
		{Name: "registration.registrar", Label: "Registrar", Kind: kindText, MaxLen: 260, Help: "host or host:port; blank: the trunk's host and port."},
		{Name: "registration.transport", Label: "Registration transport", Kind: kindEnum, Options: []string{model.TransportUDP, model.TransportTCP, model.TransportTLS}, Help: "Not set: the trunk's transport."},
		credential("registration.username", "Registration username", "Blank: the trunk's username."),
		credential("registration.password", "Registration password", "Write-only. Blank keeps the stored one (or the trunk's password if none)."),
		expires,
		{Name: "registration.contactUser", Label: "Contact user", Kind: kindText, MaxLen: 64, Help: "The user INVITEs to this trunk are addressed to: 1 to 64 letters, digits or . _ ~ + -. Blank: the username."},
	}
}()

// trunkInput reads the trunk form.
func trunkInput(form url.Values, creating bool) (siptrunk.Input, *formReader) {
	fr := newFormReader(form, creating)
	in := siptrunk.Input{
		FriendlyName:        fr.required("friendlyName"),
		Transport:           fr.required("transport"),
		Host:                fr.text("host"),
		Port:                fr.number("port", false),
		Username:            fr.text("username"),
		Password:            fr.secret("password"),
		InboundUsername:     fr.text("inboundUsername"),
		InboundPassword:     fr.secret("inboundPassword"),
		InboundAllowedCIDRs: fr.lines("inboundAllowedCidrs"),
		CallsPerSecond:      fr.decimal("callsPerSecond"),
	}
	for name, f := range map[string]*opt.Field[string]{"clearPassword": &in.Password, "clearInboundPassword": &in.InboundPassword} {
		if fr.checked(name) {
			*f = opt.Field[string]{Set: true, Null: true}
		}
	}
	if !fr.checked("register") {
		in.Registration = blank[siptrunk.RegistrationInput](creating)
		return in, fr
	}
	reg := siptrunk.RegistrationInput{
		Registrar:      fr.text("registration.registrar"),
		Transport:      fr.text("registration.transport"),
		Username:       fr.text("registration.username"),
		Password:       fr.secret("registration.password"),
		ExpiresSeconds: fr.number("registration.expiresSeconds", true),
		ContactUser:    fr.text("registration.contactUser"),
		Enabled:        opt.Value(fr.checked("registration.enabled")),
	}
	if fr.checked("clearRegistrationPassword") {
		reg.Password = opt.Field[string]{Set: true, Null: true}
	}
	in.Registration = opt.Value(reg)
	return in, fr
}

// trunkValues is a stored trunk as the form's inputs.
func trunkValues(t model.SIPTrunk) trunkFormData {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	v := map[string]string{
		"friendlyName": t.FriendlyName, "transport": t.Transport, "host": str(t.Host),
		"username": str(t.Username), "inboundUsername": str(t.InboundUsername),
		"inboundAllowedCidrs": strings.Join(t.InboundAllowedCIDRs, "\n"),
	}
	if t.Port != nil {
		v["port"] = strconv.Itoa(*t.Port)
	}
	if t.CallsPerSecond != nil {
		v["callsPerSecond"] = strconv.FormatFloat(*t.CallsPerSecond, 'f', -1, 64)
	}
	d := trunkFormData{ID: t.ID, Password: len(t.Password) > 0, InboundPassword: len(t.InboundPassword) > 0, Status: liveStatus(t)}
	if reg := t.Registration; reg != nil {
		v["register"] = "on"
		v["registration.registrar"], v["registration.transport"], v["registration.username"] = str(reg.Registrar), str(reg.Transport), str(reg.Username)
		v["registration.expiresSeconds"] = strconv.Itoa(reg.ExpiresSeconds)
		if reg.ContactUserSet {
			v["registration.contactUser"] = reg.ContactUser
		}
		if reg.Enabled {
			v["registration.enabled"] = "on"
		}
		d.RegistrationPassword = len(reg.Password) > 0
	} else {
		v["registration.enabled"] = "on" // a registration added on edit starts enabled, as through the API
	}
	d.Values = v
	return d
}

func (s *Server) newTrunk(w http.ResponseWriter, r *http.Request) {
	d := trunkFormData{Creating: true}
	d.Values = map[string]string{"transport": model.TransportUDP, "registration.enabled": "on"}
	s.renderTrunkForm(w, r, http.StatusOK, d)
}

func (s *Server) createTrunk(w http.ResponseWriter, r *http.Request) {
	saveForm(s, w, r, true, trunkInput,
		func(in siptrunk.Input) (model.SIPTrunk, error) { return s.SIPTrunks.Create(r.Context(), orgID(r), in) },
		func(t model.SIPTrunk) string { return "/trunks/" + t.ID + "?saved=1" },
		func(values map[string]string, err error) {
			d := trunkFormData{Creating: true}
			d.Values = values
			s.trunkFormFailed(w, r, d, err)
		})
}

func (s *Server) editTrunk(w http.ResponseWriter, r *http.Request) {
	t, err := s.SIPTrunks.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := trunkValues(t)
	d.Saved = r.URL.Query().Get("saved") == "1"
	s.renderTrunkForm(w, r, http.StatusOK, d)
}

func (s *Server) updateTrunk(w http.ResponseWriter, r *http.Request) {
	t, err := s.SIPTrunks.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err) // another organization's trunk is not found, form or not
		return
	}
	saveForm(s, w, r, false, trunkInput,
		func(in siptrunk.Input) (model.SIPTrunk, error) {
			return s.SIPTrunks.Update(r.Context(), orgID(r), t.ID, in)
		},
		func(model.SIPTrunk) string { return "/trunks/" + t.ID + "?saved=1" },
		func(values map[string]string, err error) {
			d := trunkValues(t)
			d.Values = values
			s.trunkFormFailed(w, r, d, err)
		})
}

func (s *Server) trunkFormFailed(w http.ResponseWriter, r *http.Request, d trunkFormData, err error) {
	s.refuseForm(w, r, &d.formState, err, "trunk", func(status int) { s.renderTrunkForm(w, r, status, d) })
}

func (s *Server) renderTrunkForm(w http.ResponseWriter, r *http.Request, status int, d trunkFormData) {
	title := "New SIP trunk"
	if !d.Creating {
		title = "Edit " + d.Values["friendlyName"]
	}
	s.render(w, r, status, "trunk", title, "trunks", d)
}

func (s *Server) confirmDeleteTrunk(w http.ResponseWriter, r *http.Request) {
	t, err := s.SIPTrunks.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+t.FriendlyName, "trunks", confirmData{
		Question: "Delete the SIP trunk “" + t.FriendlyName + "”? Agents and phone numbers using it become unassigned, and its registration ends.",
		Action:   "/trunks/" + t.ID + "/delete", Button: "Delete trunk", Cancel: "/trunks/" + t.ID,
	})
}

func (s *Server) deleteTrunk(w http.ResponseWriter, r *http.Request) {
	if err := s.SIPTrunks.Delete(r.Context(), orgID(r), r.PathValue("id")); err != nil {
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/trunks", http.StatusSeeOther)
}
