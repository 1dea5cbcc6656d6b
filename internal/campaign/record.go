package campaign

import "github.com/parley-voice/parley/internal/model"

// Record is a campaign as the API answers it and campaign_completed
// delivers it: every field, null where unset.
type Record struct {
	ID             string                `json:"id"`
	Name           string                `json:"name"`
	AgentID        string                `json:"agentId"`
	Description    *string               `json:"description"`
	Status         string                `json:"status"`
	FromNumbers    []string              `json:"fromNumbers"`
	Timezone       string                `json:"timezone"`
	CallingWindows []model.CallingWindow `json:"callingWindows"`
	StartAt        *model.Timestamp      `json:"startAt"`
	EndAt          *model.Timestamp      `json:"endAt"`
	MaxConcurrency *int                  `json:"maxConcurrency"`
	CallsPerMinute int                   `json:"callsPerMinute"`
	Retry          model.CampaignRetry   `json:"retry"`
	Variables      map[string]any        `json:"variables"`
	WebhookURL     *string               `json:"webhookUrl"`
	Counts         model.CampaignCounts  `json:"counts"`
	CreatedAt      model.Timestamp       `json:"createdAt"`
	UpdatedAt      model.Timestamp       `json:"updatedAt"`
	StartedAt      *model.Timestamp      `json:"startedAt"`
	CompletedAt    *model.Timestamp      `json:"completedAt"`
}

// NewRecord presents c.
func NewRecord(c model.Campaign) Record {
	r := Record{
		ID: c.ID, Name: c.Name, AgentID: c.AgentID, Description: c.Description, Status: c.Status,
		FromNumbers: c.Config.FromNumbers, Timezone: c.Config.Timezone, CallingWindows: c.Config.CallingWindows,
		StartAt: model.TimestampPtr(c.StartAt), EndAt: model.TimestampPtr(c.EndAt),
		MaxConcurrency: c.Config.MaxConcurrency, CallsPerMinute: c.Config.CallsPerMinute, Retry: c.Config.Retry,
		Variables: c.Config.Variables, WebhookURL: c.Config.WebhookURL, Counts: c.Counts,
		CreatedAt: model.Timestamp(c.CreatedAt), UpdatedAt: model.Timestamp(c.UpdatedAt),
		StartedAt: model.TimestampPtr(c.StartedAt), CompletedAt: model.TimestampPtr(c.CompletedAt),
	}
	if r.FromNumbers == nil {
		r.FromNumbers = []string{}
	}
	if r.CallingWindows == nil {
		r.CallingWindows = []model.CallingWindow{}
	}
	if r.Variables == nil {
		r.Variables = map[string]any{}
	}
	if r.Retry.RetryOn == nil {
		r.Retry.RetryOn = []string{}
	}
	return r
}
