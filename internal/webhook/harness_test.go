package webhook

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// receiver is a customer's webhook endpoint on loopback that records every
// request it gets.
type receiver struct {
	*httptest.Server
	// release unblocks hanging handlers when the test ends.
	release chan struct{}

	mu       sync.Mutex
	requests []received
}

// received is one request as the receiver saw it.
type received struct {
	method, path, rawQuery string
	header                 http.Header
	body                   []byte
}

// answer is how a receiver answers a request.
type answer func(rc *receiver, w http.ResponseWriter, r *http.Request)

// newReceiver starts a receiver that answers with a (nil: 200, no body).
func newReceiver(t *testing.T, a answer) *receiver {
	t.Helper()
	rc := &receiver{release: make(chan struct{})}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.requests = append(rc.requests, received{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		rc.mu.Unlock()
		if a != nil {
			a(rc, w, r)
		}
	}))
	t.Cleanup(func() {
		close(rc.release)
		rc.Close()
	})
	return rc
}

// got returns the requests received so far.
func (rc *receiver) got() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.requests...)
}

// only returns the one request received, failing the test otherwise.
func (rc *receiver) only(t *testing.T) received {
	t.Helper()
	got := rc.got()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want exactly 1", len(got))
	}
	return got[0]
}

// status answers with code and body.
func status(code int, body string) answer {
	return func(_ *receiver, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// hang answers only when the sender gives up (or the test ends).
func hang(rc *receiver, _ http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-rc.release:
	}
}

// newSender returns a Sender closed when the test ends. Receivers are on
// loopback, so tests that are not about the address check allow private
// addresses.
func newSender(t *testing.T, o Options) *Sender {
	t.Helper()
	s := New(o)
	t.Cleanup(s.Close)
	return s
}

func loopbackSender(t *testing.T) *Sender {
	return newSender(t, Options{AllowPrivate: true})
}
