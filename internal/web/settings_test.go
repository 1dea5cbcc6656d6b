package web

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"testing"
)

var webhookSecret = regexp.MustCompile(`whsec_[0-9A-Za-z]{20,}`)

func TestSettingsConcurrencyAndWebhookSecret(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	wantContains(t, b.get("/settings"), `value="10"`, `max="10000"`, "not signing")

	p := b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"0"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="concurrencyLimit-error"`, "must be between 1 and 10000", `value="0"`)
	p = b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"many"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, "must be a whole number")

	p = b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"25"}})
	if p.location() != "/settings?saved=1" {
		t.Fatalf("save: %d to %q\n%s", p.status, p.location(), p.body)
	}
	if o, err := e.svc.Orgs.Get(ctx, u.OrgID); err != nil || o.ConcurrencyLimit != 25 {
		t.Fatalf("organization after saving: %+v, %v", o, err)
	}
	wantContains(t, b.get("/settings?saved=1"), "Saved.", `value="25"`)

	// Rotate: the secret is shown on this answer only, and is the one that signs.
	p = b.post("/settings/webhook-secret", nil)
	wantStatus(t, p, http.StatusCreated)
	sec := webhookSecret.FindString(p.body)
	if got, err := e.svc.Orgs.WebhookSecret(ctx, u.OrgID); sec == "" || err != nil || got != sec {
		t.Fatalf("shown secret %q, stored %q, %v", sec, got, err)
	}
	p = b.get("/settings")
	if webhookSecret.MatchString(p.body) {
		t.Fatal("the secret is shown on a later page")
	}
	wantContains(t, p, "whsec_••••••••", "Rotate secret", "Stop signing…")

	wantContains(t, b.get("/settings/webhook-secret/delete"), "Stop signing the organization&#39;s webhooks?")
	if p := b.post("/settings/webhook-secret/delete", nil); p.location() != "/settings" {
		t.Fatalf("stop signing: %d to %q", p.status, p.location())
	}
	if got, _ := e.svc.Orgs.WebhookSecret(ctx, u.OrgID); got != "" {
		t.Fatalf("still signing with %q", got)
	}
	wantContains(t, b.get("/settings"), "not signing")
}

func TestSettingsRetention(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	ctx := context.Background()
	wantContains(t, b.get("/settings"), "Keep recordings (days)", "Keep transcripts (days)", `max="3650"`,
		`name="recordingRetentionDays" type="number" value=""`, "Blank keeps them forever.")

	p := b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"10"}, "recordingRetentionDays": {"0"}, "transcriptRetentionDays": {"3651"}})
	wantStatus(t, p, http.StatusBadRequest)
	wantContains(t, p, `id="recordingRetentionDays-error"`, `id="transcriptRetentionDays-error"`, "must be null or between 1 and 3650", `value="3651"`)
	if o, err := e.svc.Orgs.Get(ctx, u.OrgID); err != nil || o.RecordingRetentionDays != nil || o.TranscriptRetentionDays != nil {
		t.Fatalf("a refused form changed the organization: %+v, %v", o, err)
	}

	p = b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"10"}, "recordingRetentionDays": {"30"}, "transcriptRetentionDays": {"365"}})
	if p.location() != "/settings?saved=1" {
		t.Fatalf("save: %d to %q\n%s", p.status, p.location(), p.body)
	}
	o, err := e.svc.Orgs.Get(ctx, u.OrgID)
	if err != nil || o.RecordingRetentionDays == nil || *o.RecordingRetentionDays != 30 || o.TranscriptRetentionDays == nil || *o.TranscriptRetentionDays != 365 {
		t.Fatalf("organization after saving: %+v, %v", o, err)
	}
	wantContains(t, b.get("/settings"), `name="recordingRetentionDays" type="number" value="30"`, `name="transcriptRetentionDays" type="number" value="365"`)

	// Blank keeps forever again.
	p = b.post("/settings", url.Values{"name": {"acme"}, "concurrencyLimit": {"10"}, "recordingRetentionDays": {""}, "transcriptRetentionDays": {"365"}})
	if p.location() != "/settings?saved=1" {
		t.Fatalf("clear: %d to %q\n%s", p.status, p.location(), p.body)
	}
	if o, err := e.svc.Orgs.Get(ctx, u.OrgID); err != nil || o.RecordingRetentionDays != nil || *o.TranscriptRetentionDays != 365 {
		t.Fatalf("organization after clearing: %+v, %v", o, err)
	}
}
