package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
)

func TestDeliverOutcomeByStatus(t *testing.T) {
	for _, tc := range []struct {
		code int
		sent bool
	}{
		{200, true}, {201, true}, {202, true}, {204, true}, {299, true},
		{301, false}, {302, false}, {303, false}, {307, false}, {308, false},
		{400, false}, {401, false}, {404, false}, {429, false},
		{500, false}, {502, false}, {503, false},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			rc := newReceiver(t, func(_ *receiver, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Location", "/elsewhere") // never followed
				w.WriteHeader(tc.code)
			})
			s := loopbackSender(t)
			r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: rc.URL + "/hook", Body: []byte(`{}`)})
			if r.Sent != tc.sent || r.StatusCode != tc.code {
				t.Fatalf("Sent %v, StatusCode %d, want %v, %d (err %v)", r.Sent, r.StatusCode, tc.sent, tc.code, r.Err)
			}
			if want := map[bool]string{true: "sent", false: "failed"}[tc.sent]; r.Status() != want {
				t.Errorf("Status %q, want %q", r.Status(), want)
			}
			if tc.sent != (r.Err == nil) {
				t.Errorf("Err %v with Sent %v", r.Err, r.Sent)
			}
			if !tc.sent && !errors.Is(r.Err, ErrStatus) {
				t.Errorf("Err %v, want ErrStatus", r.Err)
			}
			if tc.code/100 == 3 && !strings.Contains(r.Err.Error(), "redirects are not followed") {
				t.Errorf("Err %q does not say redirects are not followed", r.Err)
			}
			if got := rc.only(t); got.path != "/hook" || got.method != http.MethodPost {
				t.Errorf("got %s %s, want POST /hook", got.method, got.path)
			}
		})
	}
}

func TestDeliverTimeout(t *testing.T) {
	rc := newReceiver(t, hang)
	s := loopbackSender(t)
	r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: rc.URL, Body: []byte(`{}`), Timeout: 200 * time.Millisecond})
	if r.Sent || !errors.Is(r.Err, ErrTimeout) || r.StatusCode != 0 {
		t.Fatalf("Sent %v, StatusCode %d, Err %v; want a timeout", r.Sent, r.StatusCode, r.Err)
	}
	rc.only(t)
}

func TestDeliverTimeoutWhileReadingBody(t *testing.T) {
	rc := newReceiver(t, func(rc *receiver, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"partial":`))
		w.(http.Flusher).Flush()
		hang(rc, w, r)
	})
	s := loopbackSender(t)
	r := s.Deliver(t.Context(), Delivery{Event: EventCustomTool, URL: rc.URL, Timeout: 200 * time.Millisecond, MaxResponse: 16 << 10})
	if r.Sent || !errors.Is(r.Err, ErrTimeout) || r.StatusCode != 200 {
		t.Fatalf("Sent %v, StatusCode %d, Err %v; want a timeout after 200", r.Sent, r.StatusCode, r.Err)
	}
	rc.only(t)
}

func TestDeliverConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := loopbackSender(t)
	r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: "http://" + addr + "/hook?token=s3cret"})
	if r.Sent || r.Err == nil || r.StatusCode != 0 || errors.Is(r.Err, ErrTimeout) {
		t.Fatalf("Sent %v, StatusCode %d, Err %v; want connection refused", r.Sent, r.StatusCode, r.Err)
	}
	if strings.Contains(r.Err.Error(), "s3cret") || strings.Contains(r.Err.Error(), "/hook") {
		t.Errorf("Err %q shows the URL", r.Err)
	}
}

func TestDeliverCanceledContext(t *testing.T) {
	rc := newReceiver(t, nil)
	s := loopbackSender(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := s.Deliver(ctx, Delivery{Event: EventPostCall, URL: rc.URL})
	if r.Sent || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("Sent %v, Err %v; want canceled", r.Sent, r.Err)
	}
	if n := len(rc.got()); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

func TestDeliverCanceledWhileWaiting(t *testing.T) {
	arrived := make(chan struct{})
	rc := newReceiver(t, func(rc *receiver, w http.ResponseWriter, r *http.Request) {
		close(arrived)
		hang(rc, w, r)
	})
	s := loopbackSender(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Result)
	go func() { done <- s.Deliver(ctx, Delivery{Event: EventPostCall, URL: rc.URL, Timeout: time.Hour}) }()
	<-arrived
	cancel()
	if r := <-done; r.Sent || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("Sent %v, Err %v; want canceled", r.Sent, r.Err)
	}
}

func TestDeliverHeaders(t *testing.T) {
	rc := newReceiver(t, nil)
	s := loopbackSender(t)
	at := time.Unix(1_700_000_000, 0)
	s.now = func() time.Time { return at }
	body := []byte(`{"id":"c1"}`)
	r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: rc.URL, Secret: "whsec_test", Body: body})
	if !r.Sent {
		t.Fatal(r.Err)
	}
	got := rc.only(t)
	mac := hmac.New(sha256.New, []byte("whsec_test"))
	mac.Write([]byte("1700000000." + string(body)))
	want := map[string]string{
		"Content-Type":       "application/json",
		"User-Agent":         "Parley-Webhook/1",
		"X-Parley-Event":     "post_call",
		"X-Parley-Delivery":  r.ID,
		"X-Parley-Signature": "t=1700000000,v1=" + hex.EncodeToString(mac.Sum(nil)),
		"Content-Length":     fmt.Sprint(len(body)),
	}
	checkHeaders(t, got.header, want)
	if string(got.body) != string(body) {
		t.Errorf("body %q, want %q", got.body, body)
	}
	if id, err := uuid.Parse(r.ID); err != nil || id.Version() != 4 {
		t.Errorf("X-Parley-Delivery %q is not a version 4 UUID", r.ID)
	}
	if err := Verify("whsec_test", got.header.Get(HeaderSignature), got.body, at.Add(time.Minute), 0); err != nil {
		t.Errorf("Verify: %v", err)
	}
}

func TestDeliverUnsignedWithoutSecret(t *testing.T) {
	rc := newReceiver(t, nil)
	s := loopbackSender(t)
	r := s.Deliver(t.Context(), Delivery{Event: EventPreCall, URL: rc.URL, Body: []byte(`{}`),
		Headers: []Header{{HeaderSignature, "t=1,v1=forged"}}})
	if !r.Sent {
		t.Fatal(r.Err)
	}
	checkHeaders(t, rc.only(t).header, map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "Parley-Webhook/1",
		"X-Parley-Event":    "pre_call",
		"X-Parley-Delivery": r.ID,
		"Content-Length":    "2",
	})
}

// checkHeaders checks that h holds exactly the headers of want.
func checkHeaders(t *testing.T, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := h.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("header %s: %q, want %q", k, got, v)
		}
	}
	for k := range h {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected header %s: %q", k, h.Values(k))
		}
	}
}

func TestDeliverExtraHeadersAndQuery(t *testing.T) {
	rc := newReceiver(t, nil)
	s := loopbackSender(t)
	r := s.Deliver(t.Context(), Delivery{
		Event: EventCustomTool,
		URL:   rc.URL + "/tool?keep=1&z=%2F#frag",
		Body:  []byte(`{}`),
		Headers: []Header{
			{"X-Api-Key", "k1"},
			{"x-multi", "a"}, {"X-Multi", "b"},
			{"X-Parley-Event", "forged"}, {"User-Agent", "other"}, {"Content-Type", "text/plain"},
		},
		Query: url.Values{"a": {"1", "2"}, "b c": {"d&e"}},
	})
	if !r.Sent {
		t.Fatal(r.Err)
	}
	got := rc.only(t)
	if want := "keep=1&z=%2F&a=1&a=2&b+c=d%26e"; got.rawQuery != want {
		t.Errorf("query %q, want %q", got.rawQuery, want)
	}
	if got.path != "/tool" {
		t.Errorf("path %q", got.path)
	}
	if v := got.header.Get("X-Api-Key"); v != "k1" {
		t.Errorf("X-Api-Key %q", v)
	}
	if v := got.header.Values("X-Multi"); !slices.Equal(v, []string{"a", "b"}) {
		t.Errorf("X-Multi %q", v)
	}
	for k, want := range map[string]string{"X-Parley-Event": "custom_tool", "User-Agent": UserAgent, "Content-Type": "application/json"} {
		if v := got.header.Values(k); !slices.Equal(v, []string{want}) {
			t.Errorf("%s %q, want only %q", k, v, want)
		}
	}
}

func TestDeliveryIDsUnique(t *testing.T) {
	rc := newReceiver(t, nil)
	s := loopbackSender(t)
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ids[i] = s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: rc.URL}).ID
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, req := range rc.got() {
		seen[req.header.Get(HeaderDelivery)] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("delivery %q not received", id)
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct delivery ids over %d deliveries", len(seen), n)
	}
}

func TestDeliverBadURL(t *testing.T) {
	s := newSender(t, Options{})
	for _, u := range []string{
		"", "ftp://example.com/x", "file:///etc/passwd", "gopher://example.com", "javascript:alert(1)",
		"/relative", "example.com/hook", "http://", "http://:8080/x", "https:///x", "http://exa mple.com/", "%",
	} {
		r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: u})
		if r.Sent || !errors.Is(r.Err, ErrBadURL) || r.ID != "" {
			t.Errorf("%q: Sent %v, ID %q, Err %v; want ErrBadURL and nothing sent", u, r.Sent, r.ID, r.Err)
		}
	}
}

func TestDeliverResponseBody(t *testing.T) {
	rc := newReceiver(t, status(http.StatusOK, strings.Repeat("x", 100)))
	s := loopbackSender(t)
	for _, tc := range []struct {
		limit     int64
		want      int
		truncated bool
	}{{0, 0, false}, {10, 10, true}, {99, 99, true}, {100, 100, false}, {16 << 10, 100, false}} {
		r := s.Deliver(t.Context(), Delivery{Event: EventCustomTool, URL: rc.URL, MaxResponse: tc.limit})
		if !r.Sent || len(r.Body) != tc.want || r.Truncated != tc.truncated {
			t.Errorf("limit %d: Sent %v, %d bytes, truncated %v; want %d bytes, truncated %v (err %v)",
				tc.limit, r.Sent, len(r.Body), r.Truncated, tc.want, tc.truncated, r.Err)
		}
	}
}

func TestDeliverErrorBodyKept(t *testing.T) {
	rc := newReceiver(t, status(http.StatusBadRequest, `{"error":"no such order"}`))
	s := loopbackSender(t)
	r := s.Deliver(t.Context(), Delivery{Event: EventCustomTool, URL: rc.URL, MaxResponse: 16 << 10})
	if r.Sent || r.StatusCode != 400 || string(r.Body) != `{"error":"no such order"}` {
		t.Fatalf("Sent %v, StatusCode %d, Body %q", r.Sent, r.StatusCode, r.Body)
	}
}

func TestDeliverHugeResponse(t *testing.T) {
	const total = 10 << 20
	rc := newReceiver(t, func(_ *receiver, w http.ResponseWriter, _ *http.Request) {
		chunk := []byte(strings.Repeat("y", 32<<10))
		for sent := 0; sent < total; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the sender stopped reading
			}
		}
	})
	s := loopbackSender(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := s.Deliver(t.Context(), Delivery{Event: EventCustomTool, URL: rc.URL, MaxResponse: 16 << 10})
	runtime.ReadMemStats(&after)
	if !r.Sent || len(r.Body) != 16<<10 || !r.Truncated {
		t.Fatalf("Sent %v, %d bytes, truncated %v (err %v); want 16 KiB, truncated", r.Sent, len(r.Body), r.Truncated, r.Err)
	}
	// Not a timing assertion: buffering the response would allocate at
	// least its 10 MiB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("delivery allocated %d bytes for a 10 MiB answer cut at 16 KiB", grew)
	}
	rc.only(t)
}

func TestDeliverHugeResponseHeaders(t *testing.T) {
	rc := newReceiver(t, func(_ *receiver, w http.ResponseWriter, _ *http.Request) {
		for i := range 100 {
			w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("h", 1<<10))
		}
		w.WriteHeader(http.StatusOK)
	})
	s := loopbackSender(t)
	if r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: rc.URL}); r.Sent {
		t.Fatal("delivery with 100 KiB of response headers was sent")
	}
	rc.only(t)
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ok := newReceiver(t, nil)
	bad := newReceiver(t, status(http.StatusInternalServerError, ""))
	s := newSender(t, Options{AllowPrivate: true, Registerer: reg})
	newSender(t, Options{Registerer: reg}) // a second Sender shares the metrics
	s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: ok.URL})
	s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: ok.URL})
	s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: bad.URL})
	s.PreCall(t.Context(), "", "", PreCallPayload{}) // skipped: not a delivery

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	var observed uint64
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "parley_webhook_deliveries_total":
				counts[labels["event"]+"/"+labels["result"]] = m.GetCounter().GetValue()
			case "parley_webhook_delivery_duration_seconds":
				if labels["event"] == EventPostCall {
					observed = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if want := map[string]float64{"post_call/sent": 2, "post_call/failed": 1}; !maps.Equal(counts, want) {
		t.Errorf("deliveries %v, want %v", counts, want)
	}
	if observed != 3 {
		t.Errorf("duration observations %d, want 3", observed)
	}
}

func TestFailureLogged(t *testing.T) {
	var logs bytes.Buffer
	rc := newReceiver(t, status(http.StatusBadGateway, "upstream said: s3cret"))
	s := newSender(t, Options{AllowPrivate: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: rc.URL + "/hook?token=s3cret", MaxResponse: 1 << 10})
	if r.Sent {
		t.Fatal("sent")
	}
	var entry map[string]any
	if err := json.Unmarshal(logs.Bytes(), &entry); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if entry["level"] != "WARN" || entry["event"] != EventPostCall || entry["delivery_id"] != r.ID || entry["status_code"] != 502.0 {
		t.Errorf("log entry %v", entry)
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log %q shows the URL or the response", logs.String())
	}
	logs.Reset()
	if r := s.Deliver(t.Context(), Delivery{Event: EventPostCall, URL: newReceiver(t, nil).URL}); !r.Sent || logs.Len() != 0 {
		t.Errorf("a sent delivery logged %q", logs.String())
	}
}
