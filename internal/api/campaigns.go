package api

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"

	"github.com/parley-voice/parley/internal/campaign"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// maxRecipientsBody bounds POST /campaigns/{id}/recipients, CSV or JSON:
// 100,000 rows of a CSV file fit.
const maxRecipientsBody = campaign.MaxCSVBytes

var campaignStatuses = []string{
	model.CampaignDraft, model.CampaignRunning, model.CampaignPaused, model.CampaignCompleted, model.CampaignCanceled,
}

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	f := store.CampaignFilter{
		Page:    q.storePage(p),
		Status:  q.enum("status", "", campaignStatuses...),
		AgentID: q.uuid("agentId"),
	}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.Campaigns.List(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, campaign.NewRecord), p, total)
}

// actionHandler serves POST /campaigns/{id}/<verb>: no body is read, the
// campaign as it stands afterwards is answered.
func actionHandler[M, J any](act func(context.Context, string, string) (M, error), present func(M) J) http.HandlerFunc {
	return getHandler(uuidPath, act, present)
}

// addRecipients takes a JSON body, or a CSV file with Content-Type
// text/csv; the body is read whole (up to its limit) before it is parsed,
// so a body over the limit is 413 whatever it holds.
func (s *Server) addRecipients(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b campaign.Batch
	if isCSV(r) {
		b, err = campaign.ParseCSV(bytes.NewReader(body))
	} else {
		b, err = campaign.ParseJSON(body)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	added, err := s.Campaigns.AddRecipients(r.Context(), orgID(r), id, b)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, added)
}

// isCSV reports whether the request says its body is text/csv.
func isCSV(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "text/csv"
}

var recipientStatuses = model.RecipientStatuses

// listRecipients lists in upload order by default (sortDir=desc reverses).
func (s *Server) listRecipients(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	q := newQuery(r)
	p := q.page()
	f := store.RecipientFilter{
		Page:   store.Page{Number: p.Number, Size: p.Size, SortDir: q.enum("sortDir", store.Asc, store.Asc, store.Desc)},
		Status: q.enum("status", "", recipientStatuses...),
	}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	list, total, err := s.Campaigns.ListRecipients(r.Context(), orgID(r), id, f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(list, campaign.NewRecipientRecord), p, total)
}
