package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// The talk page lets a signed-in person talk to an agent from the browser:
// static/talk.js makes the WebRTC offer, POST /agents/{id}/talk answers it
// through the same domain WebCalls as the API's web-calls endpoint, and
// the page follows the call's transcript with GET /agents/{id}/talk/{callId}.

type talkData struct {
	ID, Name string
	// Unavailable says why this server cannot take a browser call (it
	// runs no SIP side), so the page says so before anyone presses Talk.
	Unavailable string
}

const noWebCalls = "This server does not take calls from the browser: it runs without its SIP side (--dialer simulate or none). Start it with --dialer sip to talk to agents here."

func (s *Server) talkPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.Agents.Get(r.Context(), orgID(r), r.PathValue("id"))
	if err != nil {
		s.failFind(w, r, err)
		return
	}
	d := talkData{ID: v.ID, Name: v.Name}
	if s.WebCalls == nil {
		d.Unavailable = noWebCalls
	}
	s.render(w, r, http.StatusOK, "talk", "Talk to "+v.Name, "agents", d)
}

type talkOffer struct {
	SDP string `json:"sdp"`
}

// talkAnswer is POST /agents/{id}/talk's answer: the call and the SDP
// answer the browser sets as its remote description.
type talkAnswer struct {
	CallID string `json:"callId"`
	SDP    string `json:"sdp"`
}

// talkError is every JSON failure of the talk routes: a message for people.
type talkError struct {
	Error string `json:"error"`
}

// startTalk answers the browser's offer with a web call to the agent.
func (s *Server) startTalk(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	// Another organization's agent is not found, whatever the body.
	if _, err := s.Agents.Get(r.Context(), orgID(r), id); err != nil {
		s.talkFailed(w, r, err)
		return
	}
	var in talkOffer
	body, err := io.ReadAll(r.Body) // bounded by ServeHTTP
	if err == nil {
		err = opt.Unmarshal(body, &in) // an offer twice is no offer
	}
	if err != nil || invalid.IsBlank(in.SDP) {
		writeJSON(w, http.StatusBadRequest, talkError{"The browser sent no call offer. Reload the page and try again."})
		return
	}
	if s.WebCalls == nil {
		writeJSON(w, http.StatusServiceUnavailable, talkError{noWebCalls})
		return
	}
	c, answer, err := s.WebCalls.WebCall(r.Context(), orgID(r), id, in.SDP)
	if err != nil {
		s.talkFailed(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, talkAnswer{CallID: c.ID, SDP: answer})
}

// talkFailed maps a failed start to a status and a message the page shows.
func (s *Server) talkFailed(w http.ResponseWriter, r *http.Request, err error) {
	var bad *invalid.Error
	var conflict *invalid.Conflict
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, talkError{"There is no such agent."})
	case errors.Is(err, callqueue.ErrConcurrencyLimit):
		writeJSON(w, http.StatusTooManyRequests, talkError{"Every line of your organization is busy (its concurrency limit). Try again when a call has ended."})
	case errors.As(err, &conflict):
		writeJSON(w, http.StatusConflict, talkError{"This call cannot start: " + conflict.Message + "."})
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, talkError{"This browser's call offer was refused (" + bad.Error() + "). Try a current Chrome, Firefox or Safari."})
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, callqueue.ErrDraining):
		s.log.WarnContext(r.Context(), "dashboard web call failed: database unavailable", "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", retryAfterUnavailable)
		writeJSON(w, http.StatusServiceUnavailable, talkError{messageUnavailable})
	default:
		s.log.ErrorContext(r.Context(), "dashboard web call failed", "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, talkError{"Something went wrong on our side. Try again; if it persists, the server's log says why."})
	}
}

// talkLine is one line of the live transcript: who said what.
type talkLine struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

type talkState struct {
	Status      string     `json:"status"`
	HangupCause string     `json:"hangupCause,omitempty"`
	Lines       []talkLine `json:"lines"`
}

// talkProgress is the call's status and what has been said so far: the
// page polls it while the call runs.
func (s *Server) talkProgress(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("callId")
	if !model.IsUUID(id) {
		writeJSON(w, http.StatusNotFound, talkError{"There is no such call."})
		return
	}
	c, err := s.Calls.Get(r.Context(), orgID(r), id)
	if err == nil && c.AgentID != r.PathValue("id") {
		err = errNotFound
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeJSON(w, http.StatusNotFound, talkError{"There is no such call."})
			return
		}
		s.talkFailed(w, r, err)
		return
	}
	st := talkState{Status: c.Status, Lines: []talkLine{}}
	if c.HangupCause != nil {
		st.HangupCause = *c.HangupCause
	}
	for _, e := range c.Transcript {
		role, _ := e["role"].(string)
		text, _ := e["text"].(string)
		if text == "" || (role != "user" && role != "assistant") {
			continue
		}
		st.Lines = append(st.Lines, talkLine{Role: role, Text: text})
	}
	writeJSON(w, http.StatusOK, st)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
