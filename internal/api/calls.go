package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const maxCallQueryLen = 64

var callStatuses = []string{
	model.CallQueued, model.CallInitiated, model.CallRinging, model.CallInProgress,
	model.CallCompleted, model.CallTransferred, model.CallFailed, model.CallCanceled,
}

func (s *Server) createCall(w http.ResponseWriter, r *http.Request) {
	key, done := s.idempotency(w, r, func(ctx context.Context, orgID, id string) (any, error) {
		c, err := s.Calls.Get(ctx, orgID, id)
		return presentFullCall(c), err
	})
	if done {
		return
	}
	var in call.Input
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	c, err := s.Calls.NewOutbound(r.Context(), orgID(r), in)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// The answer is known in the transaction: a retry after a crash
	// between the commit and the answer gets exactly what was lost.
	var record func(store.Tx, model.Call) error
	if key != nil {
		record = func(tx store.Tx, c model.Call) error {
			return key.record(r.Context(), tx, c.ID, http.StatusCreated, dataBody(presentFullCall(c)))
		}
	}
	err = s.Queue.PlaceRecorded(r.Context(), &c, in.SkipQueue.V, record)
	if err != nil {
		if errors.Is(err, errKeyUsed) {
			s.answerRetry(w, r, key)
			return
		}
		if errors.Is(err, callqueue.ErrConcurrencyLimit) {
			writeProblem(w, http.StatusTooManyRequests, codeConcurrencyLimit,
				"every line of the organization is taken (concurrencyLimit); retry later, or send skipQueue false to queue the call", nil)
			return
		}
		writeError(w, r, err)
		return
	}
	s.afterCommit()
	writeData(w, http.StatusCreated, call.NewRecord(c, false))
}

func (s *Server) listCalls(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	f := store.CallFilter{
		Page: q.storePage(p),
		SortBy: q.enum("sortBy", store.CallSortCreatedAt, store.CallSortCreatedAt, store.CallSortStartedAt, store.CallSortEndedAt,
			store.CallSortDurationSeconds, store.CallSortStatus, store.CallSortDirection),
		Statuses:    q.list("status", callStatuses),
		Direction:   q.enum("direction", "", model.Inbound, model.Outbound),
		AgentID:     q.uuid("agentId"),
		FolderID:    q.folder("folderId"),
		SIPTrunkID:  q.uuid("sipTrunkId"),
		CampaignID:  q.uuid("campaignId"),
		FromNumber:  q.e164("fromNumber"),
		ToNumber:    q.e164("toNumber"),
		CreatedFrom: q.time("createdFrom"),
		CreatedTo:   q.time("createdTo"),
		Query:       q.string("q", maxCallQueryLen),
	}
	if !f.CreatedFrom.IsZero() && !f.CreatedTo.IsZero() && f.CreatedTo.Before(f.CreatedFrom) {
		q.l.Add("createdTo", "must not be before createdFrom")
	}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	calls, total, err := s.Calls.List(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(calls, presentFullCall), p, total)
}

func presentFullCall(c model.Call) call.Record { return call.NewRecord(c, false) }

func (s *Server) cancelCall(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	c, err := s.Queue.Cancel(r.Context(), orgID(r), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, call.NewRecord(c, false))
}

// list reads a comma-separated list of allowed values.
func (q *query) list(name string, allowed []string) []string {
	s, ok := q.get(name)
	if !ok {
		return nil
	}
	var out []string
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if !slices.Contains(allowed, v) {
			q.l.Add(name, "must be a comma-separated list of %s", strings.Join(allowed, ", "))
			return nil
		}
		out = append(out, v)
	}
	return out
}

func (q *query) e164(name string) string {
	s, ok := q.get(name)
	if strings.HasPrefix(s, " ") {
		s = "+" + s[1:] // an unencoded "+" arrives as a space
	}
	if ok && !invalid.IsE164(s) {
		q.l.Add(name, "must be an E.164 number such as +14155550100")
		return ""
	}
	return s
}

func (q *query) time(name string) time.Time {
	s, ok := q.get(name)
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		q.l.Add(name, "must be an RFC 3339 date-time such as 2026-11-23T09:00:00Z")
		return time.Time{}
	}
	return t.UTC()
}
