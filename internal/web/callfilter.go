package web

import (
	"net/url"
	"slices"
	"strconv"
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
func callFilter(q url.Values) (store.CallFilter, []string) {
	f := store.CallFilter{Page: store.Page{Number: 1, Size: defaultPageSize, SortDir: store.Desc}, SortBy: store.CallSortCreatedAt}
	var problems []string
	bad := func(name, msg string) { problems = append(problems, name+": "+msg) }
	if v := q.Get("q"); invalid.Text(v) != "" || invalid.Len(v) > maxCallQueryLen {
		bad("q", "must be at most 64 characters of text")
	} else {
		f.Query = v
	}
	for _, v := range q["status"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if !slices.Contains(callStatuses, s) {
				bad("status", "must be a comma-separated list of "+strings.Join(callStatuses, ", "))
				f.Statuses = nil
				break
			}
			if !slices.Contains(f.Statuses, s) {
				f.Statuses = append(f.Statuses, s)
			}
		}
	}
	enum := func(name string, dst *string, allowed ...string) {
		if v := q.Get(name); v != "" {
			if slices.Contains(allowed, v) {
				*dst = v
			} else {
				bad(name, "must be one of the listed values")
			}
		}
	}
	enum("direction", &f.Direction, model.Inbound, model.Outbound)
	enum("sortBy", &f.SortBy, callSorts...)
	enum("sortDir", &f.SortDir, store.Asc, store.Desc)
	uuid := func(name string, dst *string) {
		if v := q.Get(name); v != "" {
			if model.IsUUID(v) {
				*dst = v
			} else {
				bad(name, "must be a UUID")
			}
		}
	}
	uuid("agentId", &f.AgentID)
	uuid("sipTrunkId", &f.SIPTrunkID)
	if v := q.Get("folderId"); v != "" {
		if v == store.FolderNone || model.IsUUID(v) {
			f.FolderID = v
		} else {
			bad("folderId", "must be a folder id or none")
		}
	}
	e164 := func(name string, dst *string) {
		v := q.Get(name)
		if v == "" {
			return
		}
		if strings.HasPrefix(v, " ") {
			v = "+" + v[1:] // an unencoded "+" arrives as a space
		}
		if invalid.IsE164(v) {
			*dst = v
		} else {
			bad(name, "must be an E.164 number such as +14155550100")
		}
	}
	e164("fromNumber", &f.FromNumber)
	e164("toNumber", &f.ToNumber)
	when := func(name string, dst *time.Time) {
		v := q.Get(name)
		if v == "" {
			return
		}
		// The form's datetime-local fields send minutes without a zone: UTC.
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			t, err = time.Parse("2006-01-02T15:04", v)
		}
		if err != nil {
			bad(name, "must be an RFC 3339 date-time such as 2026-11-23T09:00:00Z")
			return
		}
		*dst = t.UTC()
	}
	when("createdFrom", &f.CreatedFrom)
	when("createdTo", &f.CreatedTo)
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && f.CreatedTo.Before(f.CreatedFrom) {
		bad("createdTo", "must not be before createdFrom")
		f.CreatedTo = time.Time{}
	}
	number := func(name string, dst *int, lo, hi int) {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < lo || n > hi {
				bad(name, "must be a whole number between "+strconv.Itoa(lo)+" and "+strconv.Itoa(hi))
				return
			}
			*dst = n
		}
	}
	number("page", &f.Number, 1, 1<<31-1)
	number("pageSize", &f.Size, 1, maxPageSize)
	return f, problems
}
