package campaign

import (
	"encoding/json"
	"slices"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/webhook"
)

// Record is a campaign as the API answers it and campaign_completed
// delivers it: every field, null where unset, every count.
type Record struct {
	ID             string                `json:"id"`
	Name           string                `json:"name"`
	AgentID        string                `json:"agentId"`
	FromNumbers    []string              `json:"fromNumbers"`
	Description    *string               `json:"description"`
	Timezone       string                `json:"timezone"`
	CallingWindows []model.CallingWindow `json:"callingWindows"`
	StartAt        *model.Timestamp      `json:"startAt"`
	EndAt          *model.Timestamp      `json:"endAt"`
	MaxConcurrency *int                  `json:"maxConcurrency"`
	CallsPerMinute int                   `json:"callsPerMinute"`
	Retry          model.CampaignRetry   `json:"retry"`
	Variables      map[string]any        `json:"variables"`
	WebhookURL     *string               `json:"webhookUrl"`
	Status         string                `json:"status"`
	Counts         model.CampaignCounts  `json:"counts"`
	CreatedAt      model.Timestamp       `json:"createdAt"`
	UpdatedAt      model.Timestamp       `json:"updatedAt"`
	StartedAt      *model.Timestamp      `json:"startedAt"`
	CompletedAt    *model.Timestamp      `json:"completedAt"`
}

// NewRecord presents c.
func NewRecord(c model.Campaign) Record {
	cfg := c.Config
	r := Record{
		ID: c.ID, Name: c.Name, AgentID: c.AgentID, FromNumbers: cfg.FromNumbers, Description: c.Description,
		Timezone: cfg.Timezone, CallingWindows: cfg.CallingWindows,
		StartAt: model.TimestampPtr(c.StartAt), EndAt: model.TimestampPtr(c.EndAt),
		MaxConcurrency: cfg.MaxConcurrency, CallsPerMinute: cfg.CallsPerMinute, Retry: cfg.Retry,
		Variables: cfg.Variables, WebhookURL: cfg.WebhookURL, Status: c.Status, Counts: c.Counts,
		CreatedAt: model.Timestamp(c.CreatedAt), UpdatedAt: model.Timestamp(c.UpdatedAt),
		StartedAt: model.TimestampPtr(c.StartedAt), CompletedAt: model.TimestampPtr(c.CompletedAt),
	}
	// Lists answer [] and objects {}, never null.
	if r.FromNumbers == nil {
		r.FromNumbers = []string{}
	}
	r.CallingWindows = slices.Clone(r.CallingWindows) // filled in below, not the caller's
	if r.CallingWindows == nil {
		r.CallingWindows = []model.CallingWindow{}
	}
	for i, w := range r.CallingWindows {
		if w.Days == nil {
			r.CallingWindows[i].Days = []string{}
		}
	}
	if r.Retry.RetryOn == nil {
		r.Retry.RetryOn = []string{}
	}
	if r.Variables == nil {
		r.Variables = map[string]any{}
	}
	return r
}

// RecipientRecord is a campaign recipient as the API answers it.
type RecipientRecord struct {
	ID              string           `json:"id"`
	ToNumber        string           `json:"toNumber"`
	Variables       map[string]any   `json:"variables"`
	Timezone        *string          `json:"timezone"`
	Status          string           `json:"status"`
	Attempts        int              `json:"attempts"`
	LastHangupCause *string          `json:"lastHangupCause"`
	NextAttemptAt   *model.Timestamp `json:"nextAttemptAt"`
	CallIDs         []string         `json:"callIds"`
	UpdatedAt       model.Timestamp  `json:"updatedAt"`
}

// NewRecipientRecord presents r.
func NewRecipientRecord(r model.CampaignRecipient) RecipientRecord {
	out := RecipientRecord{
		ID: r.ID, ToNumber: r.ToNumber, Variables: r.Variables, Timezone: r.Timezone, Status: r.Status,
		Attempts: r.Attempts, LastHangupCause: r.LastHangupCause, NextAttemptAt: model.TimestampPtr(r.NextAttemptAt),
		CallIDs: r.CallIDs, UpdatedAt: model.Timestamp(r.UpdatedAt),
	}
	if out.Variables == nil {
		out.Variables = map[string]any{}
	}
	if out.CallIDs == nil {
		out.CallIDs = []string{}
	}
	return out
}

// EventCompleted is the X-Parley-Event and the event of the webhook a
// finished campaign delivers to its webhookUrl.
const EventCompleted = webhook.EventCampaignCompleted

// CompletedPayload is the body of campaign_completed.
type CompletedPayload struct {
	Event    string `json:"event"`
	Campaign Record `json:"campaign"`
}

// CompletedBody is campaign_completed's body for c, as it ended.
func CompletedBody(c model.Campaign) ([]byte, error) {
	return json.Marshal(CompletedPayload{Event: EventCompleted, Campaign: NewRecord(c)})
}
