package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-voice/parley/internal/media/audio"
	"github.com/parley-voice/parley/internal/objecttest"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/recording/s3store"
)

const (
	org  = "0190f5a4-0000-7000-8000-000000000001"
	call = "0190f5a4-0000-7000-8000-0000000000c1"
)

// newStore is a server's recording store over dir, moving recordings to
// the bucket under prefix.
func newStore(t *testing.T, srv *objecttest.Server, prefix string) (*recording.Store, *prometheus.Registry) {
	t.Helper()
	objects, err := s3store.Open(context.Background(), srv.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	return &recording.Store{Dir: t.TempDir(), Key: []byte("k"), Objects: objects, Metrics: recording.NewMetrics(reg)}, reg
}

// runUploads runs s's uploads until the test ends.
func runUploads(t *testing.T, s *recording.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.RunUploads(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// record writes a second of a call: a tone on the caller's side.
func record(t *testing.T, s *recording.Store) *recording.Writer {
	t.Helper()
	return recordCall(t, s, call)
}

func recordCall(t *testing.T, s *recording.Store, callID string) *recording.Writer {
	t.Helper()
	w, err := s.Create(org, callID, 8000)
	if err != nil {
		t.Fatal(err)
	}
	tone, silence := audio.Tone(1000, 8000, 20*time.Millisecond, 0.5), audio.Silence(8000, 20*time.Millisecond)
	for range 50 {
		w.Write(tone, silence)
	}
	return w
}

func readAll(t *testing.T, s *recording.Store) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), org, call)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func waitUploads(t *testing.T, s *recording.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.WaitUploads(ctx); err != nil {
		t.Fatalf("%d recordings still wait: %v", s.Pending(), err)
	}
}

func onDisk(s *recording.Store) bool {
	_, err := os.Stat(s.Path(org, call))
	return err == nil
}

// A recording is on disk while its call goes on and moves to the store
// when it ends; another server (another disk) then serves it, ranges
// included, and Delete removes it from the store.
func TestRecordingMovesToTheStoreAtCallEnd(t *testing.T) {
	srv := objecttest.Start(t)
	srv.SetEnv(t)
	a, reg := newStore(t, srv, "calls")
	b, _ := newStore(t, srv, "calls")
	runUploads(t, a)

	w := record(t, a)
	if !onDisk(a) || len(srv.Objects("")) != 0 {
		t.Fatalf("during the call: on disk %v, objects %q", onDisk(a), srv.Objects(""))
	}
	if _, err := b.Open(context.Background(), org, call); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("another server during the call: %v, want none yet", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	waitUploads(t, a)
	if onDisk(a) {
		t.Error("the uploaded recording is still on disk")
	}
	if got := srv.Objects(""); len(got) != 1 || got[0] != "calls/"+org+"/"+call+".wav" {
		t.Fatalf("objects %q", got)
	}
	if n := metric(t, reg, "parley_recording_uploads_total"); n != 1 {
		t.Errorf("uploads_total %v", n)
	}

	full := readAll(t, b)
	wav, err := audio.ReadWAV(bytes.NewReader(full))
	if err != nil || wav.Duration() != time.Second || !audio.DetectTone(wav.Channels[0][:800], 8000, 1000) {
		t.Fatalf("the stored recording: %v, %v", wav.Duration(), err)
	}
	if !bytes.Equal(readAll(t, a), full) {
		t.Error("the two servers read different recordings")
	}

	// A range request, as the dashboard's player seeks, served from b.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := b.Open(r.Context(), org, call)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "audio/wav")
		http.ServeContent(w, r, "x.wav", f.ModTime(), f)
	})
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Range", "bytes=1000-1999")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusPartialContent || !bytes.Equal(rec.Body.Bytes(), full[1000:2000]) {
		t.Fatalf("range: %d, %d bytes", rec.Code, rec.Body.Len())
	}

	if err := b.Delete(context.Background(), org, call); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Open(context.Background(), org, call); !errors.Is(err, os.ErrNotExist) || len(srv.Objects("")) != 0 {
		t.Fatalf("after Delete: %v, objects %q", err, srv.Objects(""))
	}
}

// The store is down when calls end: their recordings stay on disk (and
// are served from there), the uploads are retried, and they all land once
// the store is back.
func TestRecordingWaitsForTheStore(t *testing.T) {
	srv := objecttest.Start(t)
	srv.SetEnv(t)
	a, reg := newStore(t, srv, "")
	b, _ := newStore(t, srv, "")
	runUploads(t, a)

	others := []string{"0190f5a4-0000-7000-8000-0000000000c2", "0190f5a4-0000-7000-8000-0000000000c3", "0190f5a4-0000-7000-8000-0000000000c4",
		"0190f5a4-0000-7000-8000-0000000000c5", "0190f5a4-0000-7000-8000-0000000000c6"}
	w := record(t, a)
	srv.Stop()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a failed upload", func() bool { return metric(t, reg, "parley_recording_upload_failures_total") >= 1 })
	for _, id := range others { // more calls end while the store is down
		if err := recordCall(t, a, id).Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !onDisk(a) || a.Pending() != 1+len(others) || metric(t, reg, "parley_recording_uploads_pending") != float64(1+len(others)) {
		t.Fatalf("while the store is down: on disk %v, pending %d", onDisk(a), a.Pending())
	}
	local := readAll(t, a)

	srv.Restart()
	waitUploads(t, a)
	if onDisk(a) {
		t.Error("the uploaded recording is still on disk")
	}
	if !bytes.Equal(readAll(t, b), local) {
		t.Error("the stored recording differs from the one on disk")
	}
	if got := srv.Objects(""); len(got) != 1+len(others) {
		t.Errorf("objects %q", got)
	}
	if n := metric(t, reg, "parley_recording_uploads_pending"); n != 0 {
		t.Errorf("uploads_pending %v after the uploads", n)
	}
}

// A server stopped before its recordings uploaded (the store down, or a
// crash) uploads them when it starts again.
func TestRecordingsLeftOnDiskUploadAtStart(t *testing.T) {
	srv := objecttest.Start(t)
	srv.SetEnv(t)
	a, _ := newStore(t, srv, "p")
	if err := record(t, a).Close(); err != nil { // no uploads run: it stays
		t.Fatal(err)
	}
	local := readAll(t, a)

	restarted := &recording.Store{Dir: a.Dir, Key: a.Key, Objects: a.Objects}
	runUploads(t, restarted)
	eventually(t, "the upload", func() bool { return !onDisk(restarted) && len(srv.Objects("p/")) == 1 })
	if !bytes.Equal(readAll(t, restarted), local) {
		t.Error("the stored recording differs from the one on disk")
	}
}

// metric is the value of reg's metric name (a counter or a gauge).
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			m := mf.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
