package api

import (
	"errors"
	"net/http"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/callqueue"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/opt"
)

// maxWebCallBody bounds POST /v1/agents/{id}/web-calls: an offer of at
// most webrtc.MaxOfferBytes, escaped as JSON.
const maxWebCallBody = 128 << 10

type webCallInput struct {
	SDP opt.Field[string] `json:"sdp"`
}

type webCallJSON struct {
	Call call.Record `json:"call"`
	SDP  string      `json:"sdp"`
}

func (s *Server) createWebCall(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	// Another organization's agent is not found, whatever the body.
	if _, err := s.Agents.Get(r.Context(), orgID(r), id); err != nil {
		writeError(w, r, err)
		return
	}
	var in webCallInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	if !in.SDP.Present() || invalid.IsBlank(in.SDP.V) {
		writeError(w, r, invalid.One("sdp", "is required: the browser's SDP offer"))
		return
	}
	if s.WebCalls == nil {
		writeProblem(w, http.StatusServiceUnavailable, codeUnavailable, "this server does not serve web calls", nil)
		return
	}
	c, answer, err := s.WebCalls.WebCall(r.Context(), orgID(r), id, in.SDP.V)
	if errors.Is(err, callqueue.ErrConcurrencyLimit) {
		writeProblem(w, http.StatusTooManyRequests, codeConcurrencyLimit,
			"every line of the organization is taken (concurrencyLimit); retry when a call has ended", nil)
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, webCallJSON{Call: call.NewRecord(c, false), SDP: answer})
}
