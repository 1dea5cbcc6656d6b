package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	recstore "github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite"
)

// A serving Parley sweeps on its own: once an organization keeps
// recordings and transcripts a day, a call that ended two days ago loses
// its recording (file, recordingUrl, download) and its transcript, a call
// of an hour ago keeps both, and /metrics counts what went.
func TestServeSweepsExpiredRecordings(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	dir := t.TempDir()
	srv := startServer(t, build(t), []string{"PARLEY_DATA_DIR=" + dir}, "--retention-interval", "100ms")
	orgID := srv.must(srv.key, http.StatusOK, "GET", "/v1/organization", nil)["data"].(map[string]any)["id"].(string)
	srv.must(srv.key, http.StatusOK, "PATCH", "/v1/organization", map[string]any{"recordingRetentionDays": 1, "transcriptRetentionDays": 1})

	// Calls as the call plane leaves them, written beside the server (SQLite
	// takes a second connection; WAL lets it in while the server reads).
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs := &recstore.Store{Dir: filepath.Join(dir, "recordings")}
	call := func(ago time.Duration) model.Call {
		t.Helper()
		end := time.Now().Add(-ago)
		start := end.Add(-time.Minute)
		c := model.Call{
			ID: model.NewID(), OrgID: orgID, AgentID: model.NewID(), AgentName: "Front desk", Direction: model.Inbound,
			Status: model.CallCompleted, FromNumber: "+14155550100", ToNumber: "+14155550177", Prompt: "p",
			Variables: map[string]any{}, Metrics: map[string]any{}, RecordingURL: ptrTo("http://" + srv.addr + "/v1/calls/x/recording"),
			Transcript: []map[string]any{{"seq": 0.0, "role": "agent", "text": "Hello."}},
			StartedAt:  &start, EndedAt: &end, CreatedAt: start, UpdatedAt: end,
		}
		if err := st.Update(ctx, func(tx store.Tx) error { return tx.CreateCall(ctx, &c) }); err != nil {
			t.Fatal(err)
		}
		w, err := recs.Create(orgID, c.ID, 8000)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(make([]int16, 160), make([]int16, 160))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	old, recent := call(48*time.Hour), call(time.Hour)

	eventually(t, "the expired call swept", func() bool {
		c := srv.must(srv.key, http.StatusOK, "GET", "/v1/calls/"+old.ID, nil)["data"].(map[string]any)
		return c["recordingUrl"] == nil && len(c["transcript"].([]any)) == 0
	})
	if _, err := os.Stat(recs.Path(orgID, old.ID)); !os.IsNotExist(err) {
		t.Fatalf("the expired recording's file: %v, want it gone", err)
	}
	if code, _ := srv.do(srv.key, "GET", "/v1/calls/"+old.ID+"/recording", nil); code != http.StatusNotFound {
		t.Fatalf("GET the expired recording = %d, want 404", code)
	}
	c := srv.must(srv.key, http.StatusOK, "GET", "/v1/calls/"+recent.ID, nil)["data"].(map[string]any)
	if c["recordingUrl"] == nil || len(c["transcript"].([]any)) != 1 {
		t.Fatalf("the recent call lost its recording or transcript: %v", c)
	}
	if code, _ := srv.do(srv.key, "GET", "/v1/calls/"+recent.ID+"/recording", nil); code != http.StatusOK {
		t.Fatalf("GET the recent recording = %d, want 200", code)
	}
	m := scrape(t, "http://"+srv.addr+"/metrics")
	if m[`parley_retention_deleted_total{kind="recording"}`] != 1 || m[`parley_retention_deleted_total{kind="transcript"}`] != 1 {
		t.Fatalf("retention metrics: recording %v, transcript %v; want 1 and 1",
			m[`parley_retention_deleted_total{kind="recording"}`], m[`parley_retention_deleted_total{kind="transcript"}`])
	}
}

func ptrTo[T any](v T) *T { return &v }
