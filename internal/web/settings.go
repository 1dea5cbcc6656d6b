package web

import (
	"net/http"
	"strconv"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/org"
)

// settingsData is the organization's settings page. Secret is a webhook
// signing secret just made, shown on this one answer only: the API never
// shows it again either.
type settingsData struct {
	formState
	Org     model.Organization
	Signing bool
	Secret  string
	Saved   bool
}

var settingsFields = func() []agentField {
	limit := agentField{Name: "concurrencyLimit", Label: "Concurrent calls", Kind: kindInt, Required: true, Step: 1,
		Help: "How many of the organization's calls may be in progress at once: 1 to " + strconv.Itoa(org.MaxConcurrencyLimit) + ". Calls past it wait in the queue."}
	limit.Min, limit.Max, limit.HasMin, limit.HasMax = between(1, org.MaxConcurrencyLimit)
	days := func(name, label, what string) agentField {
		f := agentField{Name: name, Label: label, Kind: kindInt, Step: 1,
			Help: "Days " + what + " kept after the call ended: " + strconv.Itoa(model.MinRetentionDays) + " to " + strconv.Itoa(model.MaxRetentionDays) +
				". Blank keeps them forever. Past it they are deleted; the call record stays."}
		f.Min, f.Max, f.HasMin, f.HasMax = between(model.MinRetentionDays, model.MaxRetentionDays)
		return f
	}
	return []agentField{
		{Name: "name", Label: "Organization name", Kind: kindText, Required: true, MaxLen: org.MaxNameLen, Help: "1 to " + strconv.Itoa(org.MaxNameLen) + " characters, unique in this deployment."},
		limit,
		days("recordingRetentionDays", "Keep recordings (days)", "call recordings are"),
		days("transcriptRetentionDays", "Keep transcripts (days)", "call transcripts are"),
	}
}()

// daysValue shows a retention period in the form: blank is forever.
func daysValue(days *int) string {
	if days == nil {
		return ""
	}
	return strconv.Itoa(*days)
}

// Fields are the form's inputs, by name.
func (d settingsData) Fields() map[string]fieldView { return fieldsOf(d.formState, settingsFields) }

func (s *Server) settings(w http.ResponseWriter, r *http.Request) {
	s.renderSettings(w, r, http.StatusOK, settingsData{Saved: r.URL.Query().Get("saved") == "1"})
}

// renderSettings shows the page; a form's values, when d has them, stay
// as submitted.
func (s *Server) renderSettings(w http.ResponseWriter, r *http.Request, status int, d settingsData) {
	o, err := s.Orgs.Get(r.Context(), orgID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d.Org, d.Signing = o, len(o.WebhookSecret) > 0
	if d.Values == nil {
		d.Values = map[string]string{"name": o.Name, "concurrencyLimit": strconv.Itoa(o.ConcurrencyLimit),
			"recordingRetentionDays": daysValue(o.RecordingRetentionDays), "transcriptRetentionDays": daysValue(o.TranscriptRetentionDays)}
	}
	s.render(w, r, status, "settings", "Organization settings", "settings", d)
}

func (s *Server) updateSettings(w http.ResponseWriter, r *http.Request) {
	if !s.parseForm(w, r) {
		return
	}
	fr := newFormReader(r.PostForm, false)
	in := org.Input{Name: fr.required("name"), ConcurrencyLimit: fr.number("concurrencyLimit", false),
		RecordingRetentionDays: fr.number("recordingRetentionDays", false), TranscriptRetentionDays: fr.number("transcriptRetentionDays", false)}
	err := fr.err()
	if err == nil {
		if _, err = s.Orgs.Update(r.Context(), orgID(r), in); err == nil {
			http.Redirect(w, r, "/settings?saved=1", http.StatusSeeOther)
			return
		}
	}
	errs, msg, ok := refusal(err)
	if !ok {
		s.fail(w, r, err)
		return
	}
	if msg == "" {
		msg = "The settings were not saved: correct the fields marked below."
	}
	d := settingsData{}
	d.Values, d.Errors, d.Message = fr.values, errs, msg
	s.renderSettings(w, r, http.StatusBadRequest, d)
}

// rotateWebhookSecret makes a new signing secret and shows it in this
// answer, never again; the previous one stops signing at once.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	sec, err := s.Orgs.RotateWebhookSecret(r.Context(), orgID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.renderSettings(w, r, http.StatusCreated, settingsData{Secret: sec})
}

func (s *Server) confirmStopSigning(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "confirm", "Stop signing webhooks", "settings", confirmData{
		Question: "Stop signing the organization's webhooks? Receivers that check the signature will refuse them until a new secret is made.",
		Action:   "/settings/webhook-secret/delete", Button: "Stop signing", Cancel: "/settings",
	})
}

func (s *Server) stopSigning(w http.ResponseWriter, r *http.Request) {
	if err := s.Orgs.DeleteWebhookSecret(r.Context(), orgID(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/settings", http.StatusSeeOther)
}
