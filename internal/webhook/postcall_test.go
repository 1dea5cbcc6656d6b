package webhook

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

func TestPostCall(t *testing.T) {
	record := []byte(`{"id":"c-1","status":"COMPLETED","variables":{"name":"Ada"}}`)
	for _, tc := range []struct {
		name   string
		answer answer
		want   string
	}{
		{"200", status(http.StatusOK, ""), model.WebhookSent},
		{"200 with a body", status(http.StatusOK, "thanks, with a body nobody reads"), model.WebhookSent},
		{"201", status(http.StatusCreated, ""), model.WebhookSent},
		{"204", status(http.StatusNoContent, ""), model.WebhookSent},
		{"301", status(http.StatusMovedPermanently, ""), model.WebhookFailed},
		{"400", status(http.StatusBadRequest, ""), model.WebhookFailed},
		{"401", status(http.StatusUnauthorized, ""), model.WebhookFailed},
		{"500", status(http.StatusInternalServerError, ""), model.WebhookFailed},
		{"503", status(http.StatusServiceUnavailable, ""), model.WebhookFailed},
		{"timeout", hang, model.WebhookFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, tc.answer)
			s := loopbackSender(t)
			s.postCallTimeout = 200 * time.Millisecond
			if got := s.PostCall(t.Context(), rc.URL+"/calls/ended", "whsec_1", record); got != tc.want {
				t.Errorf("status %q, want %q", got, tc.want)
			}
			req := rc.only(t)
			if string(req.body) != string(record) || req.path != "/calls/ended" {
				t.Errorf("got %s %s, want the record at /calls/ended", req.path, req.body)
			}
			if got := req.header.Get(HeaderEvent); got != EventPostCall {
				t.Errorf("X-Parley-Event %q", got)
			}
			if err := Verify("whsec_1", req.header.Get(HeaderSignature), req.body, time.Now(), 0); err != nil {
				t.Errorf("signature: %v", err)
			}
		})
	}
}

func TestPostCallSkipped(t *testing.T) {
	s := newSender(t, Options{})
	if got := s.PostCall(t.Context(), "", "whsec_1", []byte(`{}`)); got != model.WebhookSkipped {
		t.Errorf("status %q, want skipped", got)
	}
}

// Sender is callqueue's PostCaller.
var _ interface {
	PostCall(ctx context.Context, url, secret string, body []byte) string
} = (*Sender)(nil)
