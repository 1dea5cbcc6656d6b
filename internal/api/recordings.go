package api

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
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
	var f *os.File
	var err error
	switch {
	case r.Header.Get("x-api-key") != "":
		key, aerr := s.orgs.Authenticate(r.Context(), r.Header.Get("x-api-key"))
		if aerr != nil {
			writeError(w, r, aerr)
			return
		}
		var c model.Call
		if c, err = s.Calls.Get(r.Context(), key.OrgID, id); err == nil && c.RecordingURL == nil {
			err = os.ErrNotExist // never recorded, or deleted by retention: a file left behind is not served
		}
		if err == nil && s.Recordings != nil {
			f, err = s.Recordings.Open(key.OrgID, id)
		}
	case q.Has("signature"):
		if s.Recordings == nil || !s.Recordings.Verify(id, q.Get("expires"), q.Get("signature"), time.Now()) {
			writeProblem(w, http.StatusUnauthorized, codeUnauthorized, "the recording link is invalid or has expired; use an API key", nil)
			return
		}
		var orgID string
		if orgID, err = store.Read(r.Context(), s.store, func(tx store.Tx) (string, error) { return tx.RecordingOrg(r.Context(), id) }); err == nil {
			f, err = s.Recordings.Open(orgID, id)
		}
	default:
		writeProblem(w, http.StatusUnauthorized, codeUnauthorized, messageUnauthorized, nil)
		return
	}
	if s.Recordings == nil && err == nil {
		err = os.ErrNotExist
	}
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, os.ErrNotExist):
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return
	case err != nil:
		writeError(w, r, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "audio/wav")
	w.Header().Set("Content-Disposition", `attachment; filename="`+id+`.wav"`)
	if st, err := f.Stat(); err == nil {
		http.ServeContent(w, r, id+".wav", st.ModTime(), f)
		return
	}
	_, _ = io.Copy(w, f)
}
