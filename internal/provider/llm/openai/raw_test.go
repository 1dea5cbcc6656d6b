package openai

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// newRawServer answers every request with status and body as they are,
// for error bodies the fake does not speak. It returns the server's URL.
func newRawServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
