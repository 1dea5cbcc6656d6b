package app

import (
	"net/http"
	"strings"
)

// apiPaths are served by the JSON API; everything else is the dashboard's.
func apiPath(p string) bool {
	return p == "/healthz" || p == "/readyz" || p == "/metrics" || p == "/v1" || strings.HasPrefix(p, "/v1/")
}

// httpHandler serves the API under /v1 (and /healthz, /metrics) and the
// dashboard at every other path.
func httpHandler(api, dashboard http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if apiPath(r.URL.Path) {
			api.ServeHTTP(w, r)
			return
		}
		dashboard.ServeHTTP(w, r)
	})
}
