package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Campaigns: the list and the new-campaign form with its recipients' CSV
// file. A campaign's own page (progress, recipients, actions) is in
// campaign.go; the form's reading in campaignform.go.

// campaignStatuses are a campaign's statuses, in lifecycle order.
var campaignStatuses = []string{model.CampaignDraft, model.CampaignRunning, model.CampaignPaused, model.CampaignCompleted, model.CampaignCanceled}

// campaignRow is a campaign in the list, with its agent's name.
type campaignRow struct {
	model.Campaign
	Agent string
}

// Done is how many recipients are finished (neither pending nor being called).
func (c campaignRow) Done() int { return doneCount(c.Counts) }

func doneCount(n model.CampaignCounts) int { return n.Total - n.Pending - n.InProgress }

type campaignListData struct {
	Filter    store.CampaignFilter
	Campaigns []campaignRow
	pager     // its Problems are the list query's broken parameters
	Agents    []option
	Statuses  []string
}

// campaignFilter reads the list's query with GET /v1/campaigns' parameters.
func campaignFilter(values url.Values) (store.CampaignFilter, []string) {
	q := &listQuery{v: values}
	f := store.CampaignFilter{Page: q.page()}
	q.enum("status", &f.Status, campaignStatuses...)
	q.uuid("agentId", &f.AgentID)
	return f, q.problems
}

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request) {
	f, problems := campaignFilter(r.URL.Query())
	ctx, org := r.Context(), orgID(r)
	cs, total, err := s.Campaigns.List(ctx, org, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := campaignListData{Filter: f, pager: newPager(r.URL, f.Page, total, problems), Statuses: campaignStatuses}
	if d.Agents, err = s.agentOptions(ctx, org); err != nil {
		s.fail(w, r, err)
		return
	}
	for _, c := range cs {
		d.Campaigns = append(d.Campaigns, campaignRow{Campaign: c, Agent: label(d.Agents, &c.AgentID)})
	}
	s.render(w, r, listStatus(problems), "campaigns", "Campaigns", "campaigns", d)
}

func (s *Server) newCampaign(w http.ResponseWriter, r *http.Request) {
	d := newCampaignForm(orgID(r), s.now())
	d.Values["agentId"] = r.URL.Query().Get("agentId")
	s.renderCampaignForm(w, r, http.StatusOK, d)
}

// createCampaign creates the campaign and stores the recipients of its CSV
// file, as POST /v1/campaigns and POST /v1/campaigns/{id}/recipients do.
// The file is parsed first: when it is refused nothing is created, and
// every refused line is listed with its reason.
func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request) {
	ctx, org := r.Context(), orgID(r)
	in, d, err := campaignInput(r.PostForm, true, precheckNew(org, s.now()))
	batch, csvErr := s.readRecipients(r)
	if csvErr != nil {
		lines, ok := csvRefusal(csvErr)
		if !ok {
			s.fail(w, r, csvErr)
			return
		}
		d.CSVLines, d.CSVRefused = lines, true
		if err == nil {
			// Show what else the form breaks, without creating anything.
			err = precheckNew(org, s.now())(in)
		}
	}
	var c model.Campaign
	if err == nil && csvErr == nil {
		c, err = s.Campaigns.Create(ctx, org, in)
	}
	if err != nil && !d.refuse(err) {
		s.failFind(w, r, err)
		return
	}
	if err != nil || csvErr != nil {
		if d.CSVRefused {
			d.Message = "The campaign was not created: the recipients' file was refused, for the lines listed below."
		}
		s.renderCampaignForm(w, r, http.StatusBadRequest, d)
		return
	}
	next := "/campaigns/" + c.ID
	if len(batch.Recipients) > 0 {
		added, err := s.Campaigns.AddRecipients(ctx, org, c.ID, batch)
		if err != nil {
			// All or nothing: the campaign goes with its recipients.
			if derr := s.Campaigns.Delete(context.WithoutCancel(ctx), org, c.ID); derr != nil {
				s.log.WarnContext(ctx, "remove a campaign whose recipients were not stored", "campaign", c.ID, "err", derr)
			}
			s.fail(w, r, err)
			return
		}
		next += addedQuery(added)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// readRecipients parses the form's recipients file with the API's CSV
// rules: an empty batch when no file was chosen.
func (s *Server) readRecipients(r *http.Request) (campaign.Batch, error) {
	f, err := csvFile(r, "recipients")
	if err != nil || f == nil {
		return campaign.Batch{}, err
	}
	defer f.Close()
	return campaign.ParseCSV(f)
}

// cloneValues is a copy of v that can be changed.
func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// addedQuery tells the campaign's page what an upload stored.
func addedQuery(a campaign.Added) string {
	return "?added=" + strconv.Itoa(a.Added) + "&duplicates=" + strconv.Itoa(a.Duplicates) + "&suppressed=" + strconv.Itoa(a.Suppressed)
}

func (s *Server) renderCampaignForm(w http.ResponseWriter, r *http.Request, status int, d campaignFormData) {
	var err error
	if d.Agents, err = s.agentOptions(r.Context(), orgID(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	if id := d.Values["agentId"]; !d.Creating && label(d.Agents, &id) == id {
		// The campaign's agent was deleted: kept as it is unless another is chosen.
		d.Agents = append([]option{{id, "(deleted agent)"}}, d.Agents...)
	}
	title := "New campaign"
	if !d.Creating {
		title = "Edit " + d.Values["name"]
	}
	s.render(w, r, status, "campaignform", title, "campaigns", d)
}

// editable says whether a campaign's settings may change (PATCH's rule).
func editable(status string) bool {
	return status == model.CampaignDraft || status == model.CampaignPaused
}

func (s *Server) editCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !editable(c.Status) {
		s.refuseAction(w, r, "The campaign cannot be edited: it is "+c.Status+"; only a draft or paused campaign can be.")
		return
	}
	s.renderCampaignForm(w, r, http.StatusOK, campaignValues(c))
}

// updateCampaign saves the edit form, as PATCH /v1/campaigns/{id} does.
func (s *Server) updateCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := s.campaignOf(r)
	if err != nil {
		s.failFind(w, r, err) // another organization's campaign is not found, form or not
		return
	}
	form := r.PostForm
	if form.Get("agentId") == c.AgentID {
		// Unchanged: not looked up again, so a campaign whose agent was
		// deleted can still be edited.
		form = cloneValues(form)
		form.Del("agentId")
	}
	in, d, err := campaignInput(form, false, precheckEdit(c, s.now()))
	d.ID, d.Values["agentId"] = c.ID, r.PostForm.Get("agentId")
	if err == nil {
		if _, err = s.Campaigns.Update(r.Context(), orgID(r), c.ID, in); err == nil {
			http.Redirect(w, r, "/campaigns/"+c.ID+"?saved=1", http.StatusSeeOther)
			return
		}
	}
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.refuseAction(w, r, "The campaign was not saved: "+conflict.Message+".")
	case d.refuse(err):
		s.renderCampaignForm(w, r, http.StatusBadRequest, d)
	default:
		s.failFind(w, r, err)
	}
}
