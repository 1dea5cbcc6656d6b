package openai

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// newRawServer answers every request with status, Content-Type and body
// as they are, for answers the fake does not give. It returns the
// server's URL.
func newRawServer(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
