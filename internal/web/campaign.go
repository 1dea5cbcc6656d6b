package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// A campaign's page: its settings, its progress (counts as a stacked bar,
// polled while calls are being placed), its recipients with their calls,
// the actions its status allows, and uploading more recipients.

type campaignView struct {
	model.Campaign
	Agent     string
	AgentGone bool

	Recipients []recipientRow
	Filter     store.RecipientFilter
	Statuses   []string
	pager      // the recipients' pages; its Problems are the query's broken parameters

	// Added is what the last upload stored (from the redirect after it).
	Added *campaign.Added
	// Saved says the settings were just saved.
	Saved bool
	// ActionError is why the action just asked for was refused.
	ActionError string
	// UploadLines are the refused lines of an uploaded file; UploadError
	// says why an upload was refused otherwise.
	UploadLines []lineError
	UploadError string
}

// The actions a campaign's status allows, as the service's transitions do.
func (v campaignView) CanStart() bool  { return v.Status == model.CampaignDraft }
func (v campaignView) CanPause() bool  { return v.Status == model.CampaignRunning }
func (v campaignView) CanResume() bool { return v.Status == model.CampaignPaused }
func (v campaignView) CanCancel() bool { return !finished(v.Status) }
func (v campaignView) CanDelete() bool {
	return v.Status != model.CampaignRunning && v.Status != model.CampaignPaused
}
func (v campaignView) CanUpload() bool { return !finished(v.Status) }
func (v campaignView) CanEdit() bool   { return editable(v.Status) }

func finished(status string) bool {
	return status == model.CampaignCompleted || status == model.CampaignCanceled
}

// Polls says the progress changes on its own: calls are being placed or
// are still live.
func (v campaignView) Polls() bool {
	return v.Status == model.CampaignRunning || v.Status == model.CampaignPaused && v.Counts.InProgress > 0
}

// CSV is the upload's file input: a file is required.
func (v campaignView) CSV() csvUpload { return csvUpload{Lines: v.UploadLines} }

// Done is how many recipients are finished.
func (v campaignView) Done() int { return doneCount(v.Counts) }

// segment is one status's share of the progress bar, in thousandths of
// its width (drawn as SVG: the CSP forbids inline styles).
type segment struct {
	Status, Label string
	Count         int
	X, Width      string
}

// progressOrder is the bar's order: the finished, then the live, then the
// rest to call.
var progressOrder = []string{model.RecipientCompleted, model.RecipientFailed, model.RecipientExpired, model.RecipientSuppressed,
	model.RecipientCanceled, model.RecipientInProgress, model.RecipientPending}

// Segments are the bar's parts, one per status with recipients.
func (v campaignView) Segments() []segment {
	var out []segment
	if v.Counts.Total == 0 {
		return nil
	}
	x := 0.0
	for _, st := range progressOrder {
		n := countOf(v.Counts, st)
		if n == 0 {
			continue
		}
		w := 1000 * float64(n) / float64(v.Counts.Total)
		out = append(out, segment{Status: st, Label: statusLabel(st), Count: n, X: fmt.Sprintf("%.2f", x), Width: fmt.Sprintf("%.2f", w)})
		x += w
	}
	return out
}

// Legend is every status with its count, in the bar's order.
func (v campaignView) Legend() []segment {
	out := make([]segment, len(progressOrder))
	for i, st := range progressOrder {
		out[i] = segment{Status: st, Label: statusLabel(st), Count: countOf(v.Counts, st)}
	}
	return out
}

// ProgressLabel is the bar in words, for screen readers.
func (v campaignView) ProgressLabel() string {
	parts := []string{}
	for _, sg := range v.Legend() {
		if sg.Count > 0 {
			parts = append(parts, strconv.Itoa(sg.Count)+" "+sg.Label)
		}
	}
	if len(parts) == 0 {
		return "No recipients"
	}
	return strconv.Itoa(v.Counts.Total) + " recipients: " + strings.Join(parts, ", ")
}

func countOf(n model.CampaignCounts, status string) int {
	switch status {
	case model.RecipientPending:
		return n.Pending
	case model.RecipientInProgress:
		return n.InProgress
	case model.RecipientCompleted:
		return n.Completed
	case model.RecipientFailed:
		return n.Failed
	case model.RecipientSuppressed:
		return n.Suppressed
	case model.RecipientExpired:
		return n.Expired
	case model.RecipientCanceled:
		return n.Canceled
	}
	return 0
}

// statusLabel is a recipient status in words.
func statusLabel(status string) string { return strings.ReplaceAll(status, "_", " ") }

// Windows are the calling windows in words ("mon, tue 09:00–17:00").
func (v campaignView) Windows() []string {
	out := make([]string, len(v.Config.CallingWindows))
	for i, w := range v.Config.CallingWindows {
		out[i] = strings.Join(w.Days, ", ") + " " + w.Start + "–" + w.End
	}
	return out
}

// Retry is the retry settings in words.
func (v campaignView) Retry() string {
	rt := v.Config.Retry
	if rt.MaxAttempts <= 1 {
		return "one attempt per recipient"
	}
	on := "no outcome"
	if len(rt.RetryOn) > 0 {
		on = strings.Join(rt.RetryOn, ", ")
	}
	return fmt.Sprintf("up to %d attempts, at least %d s apart, on %s", rt.MaxAttempts, rt.DelaySeconds, on)
}

// VariablesJSON is the default variables as the API writes them ("" for none).
func (v campaignView) VariablesJSON() string {
	if len(v.Config.Variables) == 0 {
		return ""
	}
	b, err := json.MarshalIndent(v.Config.Variables, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

// recipientRow is a recipient in the campaign's table.
type recipientRow struct{ model.CampaignRecipient }

// Vars is the recipient's variables on one line ("" for none).
func (r recipientRow) Vars() string {
	if len(r.Variables) == 0 {
		return ""
	}
	b, _ := json.Marshal(r.Variables) // decoded JSON: cannot fail
	return string(b)
}

// StatusLabel is the recipient's status in words.
func (r recipientRow) StatusLabel() string { return statusLabel(r.Status) }

// campaignOf is the organization's campaign the path names.
func (s *Server) campaignOf(r *http.Request) (model.Campaign, error) {
	id := r.PathValue("id")
	if !model.IsUUID(id) {
		return model.Campaign{}, errNotFound
	}
	return s.Campaigns.Get(r.Context(), orgID(r), id)
}

func (s *Server) showCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	q := r.URL.Query()
	v := campaignView{Saved: q.Get("saved") == "1"}
	if q.Has("added") {
		var a campaign.Added
		a.Added, _ = strconv.Atoi(q.Get("added"))
		a.Duplicates, _ = strconv.Atoi(q.Get("duplicates"))
		a.Suppressed, _ = strconv.Atoi(q.Get("suppressed"))
		v.Added = &a
	}
	s.renderCampaign(w, r, http.StatusOK, c, v)
}

// renderCampaign draws c's page with v's messages, its recipients as the
// query asks for them.
func (s *Server) renderCampaign(w http.ResponseWriter, r *http.Request, status int, c model.Campaign, v campaignView) {
	ctx, org := r.Context(), orgID(r)
	v.Campaign, v.Statuses = c, model.RecipientStatuses
	switch a, err := s.Agents.Get(ctx, org, c.AgentID); {
	case errors.Is(err, store.ErrNotFound):
		v.AgentGone = true
	case err != nil:
		s.fail(w, r, err)
		return
	default:
		v.Agent = a.Name
	}
	values := r.URL.Query()
	q := &listQuery{v: values}
	// Recipients are listed as uploaded unless asked otherwise.
	v.Filter.Page = store.Page{Number: 1, Size: defaultPageSize, SortDir: store.Asc}
	q.number("page", &v.Filter.Number, 1, 1<<31-1)
	q.number("pageSize", &v.Filter.Size, 1, maxPageSize)
	q.enum("sortDir", &v.Filter.SortDir, store.Asc, store.Desc)
	q.enum("status", &v.Filter.Status, model.RecipientStatuses...)
	rs, total, err := s.Campaigns.ListRecipients(ctx, org, c.ID, v.Filter)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	for _, rc := range rs {
		v.Recipients = append(v.Recipients, recipientRow{rc})
	}
	// The pages' links keep the filter, not the last upload's notice.
	u := &url.URL{Path: "/campaigns/" + c.ID}
	kept := url.Values{}
	for _, k := range []string{"status", "sortDir", "pageSize"} {
		if values.Has(k) {
			kept.Set(k, values.Get(k))
		}
	}
	u.RawQuery = kept.Encode()
	v.pager = newPager(u, v.Filter.Page, total, q.problems)
	if len(q.problems) > 0 && status == http.StatusOK {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "campaign", c.Name, "campaigns", v)
}

// campaignProgressPartial is the progress the page polls. Once the status
// differs from the one the page shows (shown), the whole page reloads, for
// its actions change with it.
func (s *Server) campaignProgressPartial(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	v := campaignView{Campaign: c}
	if shown := r.URL.Query().Get("shown"); shown != "" && shown != c.Status {
		w.Header().Set("HX-Refresh", "true")
	}
	s.renderPartial(w, r, "campaign", "campaignProgress", v)
}

// The transitions, as POST /v1/campaigns/{id}/start, /pause, /resume and
// /cancel make them.
func (s *Server) startCampaign(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, "started", s.Campaigns.Start)
}

func (s *Server) pauseCampaign(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, "paused", s.Campaigns.Pause)
}

func (s *Server) resumeCampaign(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, "resumed", s.Campaigns.Resume)
}

func (s *Server) cancelCampaign(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r, "canceled", s.Campaigns.Cancel)
}

// transition applies act to the path's campaign and shows its page again;
// a transition its status does not allow is shown there, 409.
func (s *Server) transition(w http.ResponseWriter, r *http.Request, done string, act func(ctx context.Context, orgID, id string) (model.Campaign, error)) {
	c, err := s.campaignOf(r)
	if err == nil {
		_, err = act(r.Context(), orgID(r), c.ID)
	}
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.refuseAction(w, r, "The campaign was not "+done+": "+conflict.Message+".")
		return
	case err != nil:
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/campaigns/"+c.ID, http.StatusSeeOther)
}

// refuseAction draws the campaign's page, as it is now, with why an action
// was refused (409).
func (s *Server) refuseAction(w http.ResponseWriter, r *http.Request, why string) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.renderCampaign(w, r, http.StatusConflict, c, campaignView{ActionError: why})
}

func (s *Server) confirmCancelCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Cancel "+c.Name, "campaigns", confirmData{
		Question: "Cancel the campaign “" + c.Name + "”? No one else is called: recipients not yet finished become canceled, and calls already live run to their end. A canceled campaign cannot be resumed.",
		Action:   "/campaigns/" + c.ID + "/cancel", Button: "Cancel campaign", Cancel: "/campaigns/" + c.ID,
	})
}

func (s *Server) confirmDeleteCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "confirm", "Delete "+c.Name, "campaigns", confirmData{
		Question: "Delete the campaign “" + c.Name + "” and its recipients? Its calls stay in the call history.",
		Action:   "/campaigns/" + c.ID + "/delete", Button: "Delete campaign", Cancel: "/campaigns/" + c.ID,
	})
}

func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err == nil {
		err = s.Campaigns.Delete(r.Context(), orgID(r), c.ID)
	}
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.refuseAction(w, r, "The campaign was not deleted: "+conflict.Message+".")
		return
	case err != nil:
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/campaigns", http.StatusSeeOther)
}

// uploadRecipients adds the recipients of a CSV file, as POST
// /v1/campaigns/{id}/recipients does with text/csv: all or nothing, every
// refused line listed with its reason.
func (s *Server) uploadRecipients(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	f, err := csvFile(r, "recipients")
	if err == nil && f == nil {
		s.renderCampaign(w, r, http.StatusBadRequest, c, campaignView{UploadError: "Choose a CSV file of recipients."})
		return
	}
	var batch campaign.Batch
	if err == nil {
		batch, err = campaign.ParseCSV(f)
		f.Close()
	}
	if err != nil {
		lines, ok := csvRefusal(err)
		if !ok {
			s.fail(w, r, err)
			return
		}
		s.renderCampaign(w, r, http.StatusBadRequest, c, campaignView{UploadLines: lines})
		return
	}
	added, err := s.Campaigns.AddRecipients(r.Context(), orgID(r), c.ID, batch)
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.refuseAction(w, r, "No recipient was added: "+conflict.Message+".")
		return
	case err != nil:
		if lines, ok := csvRefusal(err); ok {
			s.renderCampaign(w, r, http.StatusBadRequest, c, campaignView{UploadLines: lines})
			return
		}
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/campaigns/"+c.ID+addedQuery(added), http.StatusSeeOther)
}
