package web

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// maxCallQueryLen is GET /v1/calls' limit on q.
const maxCallQueryLen = 64

// callStatuses are the statuses GET /v1/calls filters on, in lifecycle order.
var callStatuses = []string{
	model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress,
	model.CallCompleted, model.CallTransferred, model.CallFailed, model.CallCanceled,
}

// liveStatuses are the calls the list's live section shows: not yet ended.
var liveStatuses = []string{model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress}

// callSorts are GET /v1/calls' sortBy values.
var callSorts = []string{store.CallSortCreatedAt, store.CallSortStartedAt, store.CallSortEndedAt,
	store.CallSortDurationSeconds, store.CallSortStatus, store.CallSortDirection}

// callFilter reads the call list's query with GET /v1/calls' parameters and
// rules; broken ones are reported and fall back to their defaults. Status
// takes the API's comma-separated list and, from the form's checkboxes,
// repeated values.
func callFilter(values url.Values) (store.CallFilter, []string) {
	q := &listQuery{v: values}
	f := store.CallFilter{Page: q.page(), SortBy: store.CallSortCreatedAt}
	if v := values.Get("q"); invalid.Text(v) != "" || invalid.Len(v) > maxCallQueryLen {
		q.bad("q", "must be at most 64 characters of text")
	} else {
		f.Query = v
	}
	for _, v := range values["status"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if !slices.Contains(callStatuses, s) {
				q.bad("status", "must be a comma-separated list of "+strings.Join(callStatuses, ", "))
				f.Statuses = nil
				break
			}
			if !slices.Contains(f.Statuses, s) {
				f.Statuses = append(f.Statuses, s)
			}
		}
	}
	q.enum("direction", &f.Direction, model.Inbound, model.Outbound)
	q.enum("sortBy", &f.SortBy, callSorts...)
	q.uuid("agentId", &f.AgentID)
	q.uuid("sipTrunkId", &f.SIPTrunkID)
	q.uuid("campaignId", &f.CampaignID)
	q.folder(&f.FolderID)
	q.e164("fromNumber", &f.FromNumber)
	q.e164("toNumber", &f.ToNumber)
	q.time("createdFrom", &f.CreatedFrom)
	q.time("createdTo", &f.CreatedTo)
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && f.CreatedTo.Before(f.CreatedFrom) {
		q.bad("createdTo", "must not be before createdFrom")
		f.CreatedTo = time.Time{}
	}
	return f, q.problems
}
