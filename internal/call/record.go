package call

import (
	"encoding/json"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Time is a timestamp as Parley answers it: UTC, RFC 3339, milliseconds.
type Time time.Time

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the time in Parley's layout.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(timeLayout) + `"`), nil
}

func timePtr(t *time.Time) *Time {
	if t == nil {
		return nil
	}
	v := Time(*t)
	return &v
}

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
	AgentCallerIDName     *string          `json:"agentCallerIdName"`
	RecordingURL          *string          `json:"recordingUrl"`
	HangupCause           *string          `json:"hangupCause"`
	ErrorMessage          *string          `json:"errorMessage"`
	Variables             map[string]any   `json:"variables"`
	Transcript            []map[string]any `json:"transcript"`
	Summary               *string          `json:"summary"`
	Metrics               map[string]any   `json:"metrics"`
	InitiatedAt           *Time            `json:"initiatedAt"`
	StartedAt             *Time            `json:"startedAt"`
	EndedAt               *Time            `json:"endedAt"`
	DurationSeconds       *int             `json:"durationSeconds"`
	CreatedAt             Time             `json:"createdAt"`
	UpdatedAt             Time             `json:"updatedAt"`
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
		AgentCallerIDName: c.AgentCallerIDName, RecordingURL: c.RecordingURL, HangupCause: c.HangupCause,
		ErrorMessage: c.ErrorMessage, InitiatedAt: timePtr(c.InitiatedAt), StartedAt: timePtr(c.StartedAt),
		EndedAt: timePtr(c.EndedAt), DurationSeconds: c.DurationSeconds,
		CreatedAt: Time(c.CreatedAt), UpdatedAt: Time(c.UpdatedAt),
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
