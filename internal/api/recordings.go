package api

import (
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/store"
)

// callRecording serves a call's stereo WAV to the holder of an API key of
// its organization, or of a signed link (recordingUrl) that has not
// expired. It answers 404 while there is no recording, and once the
// call's recordingUrl is null (the organization's retention deleted it).
func (s *Server) callRecording(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "expires" && k != "signature" {
			k = invalid.Visible(k)
			writeProblem(w, http.StatusBadRequest, codeValidationFailed, k+": unknown query parameter",
				[]invalid.Field{{Name: k, Message: "unknown query parameter"}})
			return
		}
	}
	var orgID string
	switch {
	case r.Header.Get("x-api-key") != "":
		key, err := s.orgs.Authenticate(r.Context(), r.Header.Get("x-api-key"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		c, err := s.Calls.Get(r.Context(), key.OrgID, id)
		if err == nil && c.RecordingURL == nil {
			err = os.ErrNotExist // never recorded, or deleted by retention: a file left behind is not served
		}
		if err != nil {
			writeRecordingError(w, r, err)
			return
		}
		orgID = key.OrgID
	case q.Has("signature"):
		if s.Recordings == nil || !s.Recordings.Verify(id, q.Get("expires"), q.Get("signature"), time.Now()) {
			writeProblem(w, http.StatusUnauthorized, codeUnauthorized, "the recording link is invalid or has expired; use an API key", nil)
			return
		}
		// The link names the call alone; its recording is kept under its
		// organization.
		var err error
		if orgID, err = s.Calls.RecordingOrg(r.Context(), id); err != nil {
			writeRecordingError(w, r, err)
			return
		}
	default:
		writeProblem(w, http.StatusUnauthorized, codeUnauthorized, messageUnauthorized, nil)
		return
	}
	if s.Recordings == nil {
		writeRecordingError(w, r, os.ErrNotExist)
		return
	}
	f, err := s.Recordings.Open(r.Context(), orgID, id)
	if err != nil {
		writeRecordingError(w, r, err)
		return
	}
	defer f.Close()
	// Set before ServeContent, which would otherwise read the start of the
	// file to sniff it: a request to the object store.
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("Content-Disposition", `attachment; filename="`+id+`.wav"`)
	http.ServeContent(w, r, id+".wav", f.ModTime(), f)
}

// writeRecordingError answers 404 for a call or recording that does not
// exist, else the error.
func writeRecordingError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return
	}
	writeError(w, r, err)
}
