package twilio_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// newRaw starts a loopback server answering with h, for answers the fake
// would never give; it returns its base URL.
func newRaw(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}
