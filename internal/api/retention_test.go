package api

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/store"
)

// withRecordings keeps the env's recordings in a temporary directory.
func withRecordings(t *testing.T) envOption {
	return func(c *envConfig) {
		c.Recordings = &recording.Store{Dir: t.TempDir(), PublicURL: "http://parley.test", Key: bytes.Repeat([]byte{9}, 32)}
	}
}

func TestOrganizationRetention(t *testing.T) {
	e := newEnv(t)
	o := e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)
	if v, ok := o["recordingRetentionDays"]; !ok || v != nil {
		t.Fatalf("default recordingRetentionDays = %v (present %v), want null", v, ok)
	}
	if v, ok := o["transcriptRetentionDays"]; !ok || v != nil {
		t.Fatalf("default transcriptRetentionDays = %v (present %v), want null", v, ok)
	}
	o = e.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"recordingRetentionDays": 30, "transcriptRetentionDays": 3650}).Data(t)
	if o["recordingRetentionDays"] != 30.0 || o["transcriptRetentionDays"] != 3650.0 {
		t.Fatalf("after PATCH: %v", o)
	}
	for _, v := range []any{0, -1, 3651} {
		e.invalid("validation_failed", "PATCH", "/v1/organization",
			map[string]any{"name": "renamed", "recordingRetentionDays": v, "transcriptRetentionDays": v},
			"recordingRetentionDays", "transcriptRetentionDays")
	}
	e.invalid("invalid_json", "PATCH", "/v1/organization", map[string]any{"recordingRetentionDays": 1.5}, "recordingRetentionDays")
	e.invalid("invalid_json", "PATCH", "/v1/organization", map[string]any{"transcriptRetentionDays": "30"}, "transcriptRetentionDays")
	o = e.must(http.StatusOK, "GET", "/v1/organization", nil).Data(t)
	if o["name"] != "acme" || o["recordingRetentionDays"] != 30.0 || o["transcriptRetentionDays"] != 3650.0 {
		t.Fatalf("refused patches changed the organization: %v", o)
	}
	// null keeps forever again; a field left out is left alone.
	o = e.must(http.StatusOK, "PATCH", "/v1/organization", map[string]any{"recordingRetentionDays": nil}).Data(t)
	if o["recordingRetentionDays"] != nil || o["transcriptRetentionDays"] != 3650.0 {
		t.Fatalf("after clearing: %v", o)
	}
	if o := e.request("GET", "/v1/organization", nil, e.otherKey).Data(t); o["transcriptRetentionDays"] != nil {
		t.Fatalf("globex's transcriptRetentionDays = %v", o["transcriptRetentionDays"])
	}
}

// A call whose recordingUrl retention cleared has no recording, with a key
// or a signed link, even while its file is still there.
func TestSweptRecordingIsGone(t *testing.T) {
	e := newEnv(t, withRecordings(t))
	recs := e.server.Recordings
	id := e.storeCall(model.NewID(), nil)
	orgID := orgOf(t, e, e.key)
	ctx := context.Background()
	link := recs.URL(id, time.Now())
	if err := e.store.Update(ctx, func(tx store.Tx) error {
		c, err := tx.GetCallForUpdate(ctx, orgID, id)
		if err != nil {
			return err
		}
		c.RecordingURL = &link
		return tx.UpdateCall(ctx, &c)
	}); err != nil {
		t.Fatal(err)
	}
	w, err := recs.Create(orgID, id, 8000)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]int16, 160), make([]int16, 160))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	signed := strings.TrimPrefix(link, "http://parley.test")
	if r := e.do("GET", "/v1/calls/"+id+"/recording", nil); r.Status != http.StatusOK {
		t.Fatalf("with a key: %d %s", r.Status, r.Body)
	}
	if r := e.request("GET", signed, nil, ""); r.Status != http.StatusOK {
		t.Fatalf("signed link: %d %s", r.Status, r.Body)
	}

	if err := e.store.Update(ctx, func(tx store.Tx) error {
		_, err := tx.ClearRecordingURLs(ctx, orgID, []string{id})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/v1/calls/"+id+"/recording", nil); r.Status != http.StatusNotFound {
		t.Fatalf("with a key after retention: %d, want 404", r.Status)
	}
	if r := e.request("GET", signed, nil, ""); r.Status != http.StatusNotFound {
		t.Fatalf("signed link after retention: %d, want 404", r.Status)
	}
	if r := e.do("GET", "/v1/calls/"+id, nil).Data(t); r["recordingUrl"] != nil {
		t.Fatalf("recordingUrl after retention = %v", r["recordingUrl"])
	}
}
