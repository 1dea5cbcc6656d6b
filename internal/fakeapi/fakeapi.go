// Package fakeapi holds what Parley's loopback fakes of vendor APIs share
// (llmtest, the openaitest packages, twiliotest): a server that goes away
// with the test, an answer delay that ends when the client does, and the
// error body of OpenAI's API.
package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Start serves mux on 127.0.0.1. At t.Cleanup the server drops any
// connection still open and closes.
func Start(t testing.TB, mux *http.ServeMux) *httptest.Server {
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// StartOpenAI is Start with OpenAI's 404 answer for every route mux does
// not have.
func StartOpenAI(t testing.TB, mux *http.ServeMux) *httptest.Server {
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteOpenAIError(w, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "", "")
	})
	return Start(t, mux)
}

// Wait sleeps d unless the client goes away first (false).
func Wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// WriteOpenAIError answers with OpenAI's error body: the type and code
// follow the status as the API's do (401 invalid_api_key, 429
// rate_limit_exceeded, 5xx server_error); param and code "" are null.
func WriteOpenAIError(w http.ResponseWriter, status int, msg, param, code string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusUnauthorized:
		code = "invalid_api_key"
	case status == http.StatusTooManyRequests:
		typ, code = "rate_limit_exceeded", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nullable(param), "code": nullable(code)},
	})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
