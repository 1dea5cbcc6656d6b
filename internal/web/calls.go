package web

import (
	"errors"
	"net/http"
	"os"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/store"
)

type callListData struct {
	Filter store.CallFilter
	Calls  []model.Call
	pager
	Statuses []string
	Sorts    []string
	Errors   []string
	Live     []model.Call
}

// Has reports whether the filter asks for status s (the checkboxes).
func (d callListData) Has(s string) bool {
	for _, v := range d.Filter.Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// listCalls is the call history, filtered as GET /v1/calls is, under the
// live calls.
func (s *Server) listCalls(w http.ResponseWriter, r *http.Request) {
	f, problems := callFilter(r.URL.Query())
	calls, total, err := s.Calls.List(r.Context(), orgID(r), f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	live, err := s.liveCalls(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d := callListData{Filter: f, Calls: calls, pager: newPager(r.URL, f.Page, total, nil), Statuses: callStatuses, Sorts: callSorts, Errors: problems, Live: live}
	status := http.StatusOK
	if len(problems) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, r, status, "calls", "Calls", "calls", d)
}

// liveCallsPartial is the live section alone, which the list polls.
func (s *Server) liveCallsPartial(w http.ResponseWriter, r *http.Request) {
	live, err := s.liveCalls(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.renderPartial(w, r, "calls", "liveCalls", callListData{Live: live})
}

// liveCalls are the organization's calls not yet ended, newest first.
func (s *Server) liveCalls(r *http.Request) ([]model.Call, error) {
	f := store.CallFilter{Page: store.Page{Number: 1, Size: maxPageSize, SortDir: store.Desc},
		SortBy: store.CallSortCreatedAt, Statuses: liveStatuses, Minimal: true}
	calls, _, err := s.Calls.List(r.Context(), orgID(r), f)
	return calls, err
}

func (s *Server) showCall(w http.ResponseWriter, r *http.Request) {
	v, err := s.callView(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "call", "Call "+v.FromNumber+" → "+v.ToNumber, "calls", v)
}

// liveCallPartial is a live call's status and transcript, which its page
// polls; once the call has ended the whole page reloads, recording and all.
func (s *Server) liveCallPartial(w http.ResponseWriter, r *http.Request) {
	v, err := s.callView(r)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	if !v.Live {
		w.Header().Set("HX-Refresh", "true")
	}
	s.renderPartial(w, r, "call", "liveCall", v)
}

// callView is the organization's call the path names.
func (s *Server) callView(r *http.Request) (callView, error) {
	id := r.PathValue("id")
	if !model.IsUUID(id) {
		return callView{}, errNotFound
	}
	c, err := s.Calls.Get(r.Context(), orgID(r), id)
	if err != nil {
		return callView{}, err
	}
	v := newCallView(c)
	if s.Recordings != nil && c.RecordingURL != nil { // null: never recorded, or deleted by retention
		if f, err := s.Recordings.Open(r.Context(), c.OrgID, c.ID); err == nil {
			f.Close()
			v.Recording = true
		}
	}
	return v, nil
}

// endCall hangs up a live call or cancels a queued one: the queue's
// Cancel, as POST /v1/calls/{id}/cancel.
func (s *Server) endCall(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !model.IsUUID(id) {
		s.failFind(w, r, errNotFound)
		return
	}
	if s.Queue == nil {
		s.renderError(w, r, http.StatusServiceUnavailable, "This server does not run calls, so it cannot end one.")
		return
	}
	_, err := s.Queue.Cancel(r.Context(), orgID(r), id)
	var conflict *invalid.Conflict
	switch {
	case errors.As(err, &conflict):
		s.renderError(w, r, http.StatusConflict, "The call was not ended: "+conflict.Message+".")
		return
	case err != nil:
		s.failFind(w, r, err)
		return
	}
	http.Redirect(w, r, "/calls/"+id, http.StatusSeeOther)
}

// callRecording streams the call's recording, the file the API's
// GET /v1/calls/{id}/recording serves, to a signed-in member of the call's
// organization; ranges are honored so the player can seek.
func (s *Server) callRecording(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !model.IsUUID(id) || s.Recordings == nil {
		s.failFind(w, r, errNotFound)
		return
	}
	c, err := s.Calls.Get(r.Context(), orgID(r), id)
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	var f recording.Reader
	if c.RecordingURL == nil { // never recorded, or deleted by retention: a file left behind is not served
		err = os.ErrNotExist
	} else {
		f, err = s.Recordings.Open(r.Context(), orgID(r), id)
	}
	if errors.Is(err, os.ErrNotExist) {
		s.renderError(w, r, http.StatusNotFound, "This call has no recording.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("Content-Disposition", `inline; filename="`+id+`.wav"`)
	http.ServeContent(w, r, id+".wav", f.ModTime(), f)
}
