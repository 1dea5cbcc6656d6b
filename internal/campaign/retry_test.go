package campaign

import (
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

func TestRetryOutcome(t *testing.T) {
	for _, c := range []struct {
		status, cause, want string
	}{
		{"COMPLETED", "USER_ENDED", ""},
		{"COMPLETED", "", ""},
		{"TRANSFERRED", "TRANSFERRED", ""},
		{"COMPLETED", "VOICEMAIL_DETECTED", "VOICEMAIL"},
		{"FAILED", "NO_ANSWER", "NO_ANSWER"},
		{"FAILED", "BUSY", "BUSY"},
		{"FAILED", "SIP_ERROR", "FAILED"},
		{"FAILED", "DIAL_FAILED", "FAILED"},
		{"FAILED", "", "FAILED"},
		{"CANCELED", "API_ENDED", "FAILED"},
		{"CANCELED", "NO_ANSWER", "FAILED"},
	} {
		var cause *string
		if c.cause != "" {
			cause = &c.cause
		}
		if got := RetryOutcome(c.status, cause); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.status, c.cause, got, c.want)
		}
	}
}

func TestNext(t *testing.T) {
	cfg := New("org", rulesT0).Config
	cfg.Retry = model.CampaignRetry{MaxAttempts: 3, DelaySeconds: 600, RetryOn: []string{"NO_ANSWER", "BUSY", "VOICEMAIL"}}
	ended := time.Date(2026, 6, 10, 15, 0, 0, 0, time.UTC)
	later := ended.Add(10 * time.Minute)
	for _, c := range []struct {
		status, cause string
		attempts      int
		want          string
		next          *time.Time
	}{
		{"COMPLETED", "USER_ENDED", 1, model.RecipientCompleted, nil},
		{"TRANSFERRED", "TRANSFERRED", 3, model.RecipientCompleted, nil},
		{"FAILED", "NO_ANSWER", 1, model.RecipientPending, &later},
		{"FAILED", "BUSY", 2, model.RecipientPending, &later},
		{"COMPLETED", "VOICEMAIL_DETECTED", 1, model.RecipientPending, &later},
		{"COMPLETED", "VOICEMAIL_DETECTED", 3, model.RecipientCompleted, nil}, // no attempt left: as its call ended
		{"FAILED", "NO_ANSWER", 3, model.RecipientFailed, nil},                // attempts reached maxAttempts
		{"FAILED", "BUSY", 4, model.RecipientFailed, nil},
		{"FAILED", "SIP_ERROR", 1, model.RecipientFailed, nil}, // FAILED is not in retryOn
		{"CANCELED", "", 1, model.RecipientFailed, nil},
	} {
		r := model.CampaignRecipient{Status: model.RecipientInProgress, Attempts: c.attempts}
		status, next := Next(cfg, r, c.status, &c.cause, ended)
		if status != c.want || (next == nil) != (c.next == nil) || (next != nil && !next.Equal(*c.next)) {
			t.Errorf("%s %s after %d attempts: %s %v, want %s %v", c.status, c.cause, c.attempts, status, next, c.want, c.next)
		}
	}
	// The default: one attempt, nothing retried.
	if status, next := Next(New("org", rulesT0).Config, model.CampaignRecipient{Attempts: 1}, "FAILED", new("NO_ANSWER"), ended); status != model.RecipientFailed || next != nil {
		t.Errorf("default retry: %s %v", status, next)
	}
	// A delay of 0 retries at once; FAILED retried when asked.
	cfg.Retry = model.CampaignRetry{MaxAttempts: 2, DelaySeconds: 0, RetryOn: []string{"FAILED"}}
	if status, next := Next(cfg, model.CampaignRecipient{Attempts: 1}, "FAILED", new("SIP_ERROR"), ended); status != model.RecipientPending || !next.Equal(ended) {
		t.Errorf("no delay: %s %v", status, next)
	}
}
