package call

import (
	"encoding/json"

	"github.com/parley-voice/parley/internal/model"
)

// Record is a call as the API answers it and the post-call webhook delivers
// it: every field, null where unset.
type Record struct {
	ID                    string           `json:"id"`
	OrganizationID        string           `json:"organizationId"`
	AgentID               string           `json:"agentId"`
	AgentName             string           `json:"agentName"`
	SIPTrunkID            *string          `json:"sipTrunkId"`
	Direction             string           `json:"direction"`
	Status                string           `json:"status"`
	FromNumber            string           `json:"fromNumber"`
	ToNumber              string           `json:"toNumber"`
	CampaignID            *string          `json:"campaignId"`
	AgentCallerIDName     *string          `json:"agentCallerIdName"`
	RecordingURL          *string          `json:"recordingUrl"`
	HangupCause           *string          `json:"hangupCause"`
	ErrorMessage          *string          `json:"errorMessage"`
	Variables             map[string]any   `json:"variables"`
	Transcript            []map[string]any `json:"transcript"`
	Summary               *string          `json:"summary"`
	Metrics               map[string]any   `json:"metrics"`
	InitiatedAt           *model.Timestamp `json:"initiatedAt"`
	StartedAt             *model.Timestamp `json:"startedAt"`
	EndedAt               *model.Timestamp `json:"endedAt"`
	DurationSeconds       *int             `json:"durationSeconds"`
	CreatedAt             model.Timestamp  `json:"createdAt"`
	UpdatedAt             model.Timestamp  `json:"updatedAt"`
	PreCallWebhookStatus  *string          `json:"preCallWebhookStatus"`
	PostCallWebhookStatus *string          `json:"postCallWebhookStatus"`
	minimal, webhook      bool
}

// NewRecord presents c. A minimal record leaves out transcript, summary,
// metrics and variables.
func NewRecord(c model.Call, minimal bool) Record {
	r := Record{
		ID: c.ID, OrganizationID: c.OrgID, AgentID: c.AgentID, AgentName: c.AgentName, SIPTrunkID: c.SIPTrunkID,
		Direction: c.Direction, Status: c.Status, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
		CampaignID:        c.CampaignID,
		AgentCallerIDName: c.AgentCallerIDName, RecordingURL: c.RecordingURL, HangupCause: c.HangupCause,
		ErrorMessage: c.ErrorMessage, InitiatedAt: model.TimestampPtr(c.InitiatedAt), StartedAt: model.TimestampPtr(c.StartedAt),
		EndedAt: model.TimestampPtr(c.EndedAt), DurationSeconds: c.DurationSeconds,
		CreatedAt: model.Timestamp(c.CreatedAt), UpdatedAt: model.Timestamp(c.UpdatedAt),
		PreCallWebhookStatus: c.PreCallWebhookStatus, PostCallWebhookStatus: c.PostCallWebhookStatus,
		minimal: minimal,
	}
	if !minimal {
		r.Variables, r.Transcript, r.Summary, r.Metrics = c.Variables, c.Transcript, c.Summary, c.Metrics
		if r.Variables == nil {
			r.Variables = map[string]any{}
		}
		if r.Transcript == nil {
			r.Transcript = []map[string]any{}
		}
		if r.Metrics == nil {
			r.Metrics = map[string]any{}
		}
	}
	return r
}

// MarshalJSON writes every key, null where unset, except what a minimal
// record leaves out and the webhook statuses a post-call payload does not carry.
func (r Record) MarshalJSON() ([]byte, error) {
	type plain Record
	b, err := json.Marshal(plain(r))
	if err != nil || (!r.minimal && !r.webhook) {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if r.minimal {
		for _, k := range []string{"variables", "transcript", "metrics", "summary"} {
			delete(m, k)
		}
	}
	if r.webhook {
		delete(m, "preCallWebhookStatus")
		delete(m, "postCallWebhookStatus")
	}
	return json.Marshal(m)
}

// PostCallBody is the post-call webhook's body: the full call record without
// its own webhook statuses.
func PostCallBody(c model.Call) ([]byte, error) {
	r := NewRecord(c, false)
	r.webhook = true
	return json.Marshal(r)
}
