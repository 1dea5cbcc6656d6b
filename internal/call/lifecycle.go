package call

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
)

// Hang-up causes.
const (
	CauseUserEnded      = "USER_ENDED"
	CauseEndCallTool    = "END_CALL_TOOL"
	CauseSilenceTimeout = "SILENCE_TIMEOUT"
	CauseMaxDuration    = "MAX_DURATION"
	CauseVoicemail      = "VOICEMAIL_DETECTED"
	CauseAPIEnded       = "API_ENDED"
	CauseNoAnswer       = "NO_ANSWER"
	CauseBusy           = "BUSY"
	CauseSIPError       = "SIP_ERROR"
	// CauseWebRTCError: a web call's browser never connected, or its
	// connection failed (ICE or DTLS), rather than hanging up.
	CauseWebRTCError      = "WEBRTC_ERROR"
	CauseDialFailed       = "DIAL_FAILED"
	CauseTransferred      = "TRANSFERRED"
	CauseServerRestart    = "SERVER_RESTART"
	CauseServerShutdown   = "SERVER_SHUTDOWN"
	CauseLeaseExpired     = "LEASE_EXPIRED"
	CauseAgentUnavailable = "AGENT_UNAVAILABLE"
)

// transitions lists, for each status, the statuses it may move to. Final
// statuses move nowhere. A queued call can be canceled or fail without ever
// dialing (its agent was deleted); a live call can fail at any point.
var transitions = map[string][]string{
	model.CallQueued:     {model.CallInitiated, model.CallCanceled, model.CallFailed},
	model.CallInitiated:  {model.CallRinging, model.CallInProgress, model.CallCanceled, model.CallFailed},
	model.CallRinging:    {model.CallInProgress, model.CallCanceled, model.CallFailed},
	model.CallInProgress: {model.CallCompleted, model.CallTransferred, model.CallFailed},
}

// IsFinal reports whether status ends a call.
func IsFinal(status string) bool {
	switch status {
	case model.CallCompleted, model.CallTransferred, model.CallFailed, model.CallCanceled:
		return true
	}
	return false
}

// IsLive reports whether status holds a line.
func IsLive(status string) bool { return slices.Contains(model.LiveCallStatuses, status) }

// IllegalTransition is a status change the state machine refuses. It is a
// bug in the caller, never written.
type IllegalTransition struct {
	CallID   string
	From, To string
}

func (e *IllegalTransition) Error() string {
	return fmt.Sprintf("call %s: illegal transition %s → %s", e.CallID, e.From, e.To)
}

// Change is one status change and what comes with it.
type Change struct {
	To           string
	HangupCause  string // final statuses
	ErrorMessage string // FAILED, and anything worth telling
	// RecordingURL is set when an answered call starts recording.
	RecordingURL string
	// PreCall carries the pre-call webhook's outcome on an inbound call
	// (variables merged and templates rendered again).
	PreCall *PreCallOutcome
	// Outcome is what the conversation reported (final statuses): written
	// in the same transaction as the end, so the post-call webhook, built
	// from the committed record, carries it.
	Outcome Outcome
}

// PreCallOutcome is what the pre-call webhook gave an inbound call.
type PreCallOutcome struct {
	Status    string // sent or failed
	Variables map[string]any
	Agent     model.Agent
}

// Apply moves c to ch.To at time at, stamping the lifecycle times: initiatedAt
// when a line is taken, startedAt when answered, endedAt and durationSeconds
// (whole seconds answered; null if never answered) when final.
func Apply(c *model.Call, ch Change, at time.Time) error {
	if !slices.Contains(transitions[c.Status], ch.To) {
		return &IllegalTransition{CallID: c.ID, From: c.Status, To: ch.To}
	}
	at = at.UTC().Truncate(time.Millisecond)
	c.Status = ch.To
	c.UpdatedAt = at
	switch {
	case ch.To == model.CallInitiated:
		c.InitiatedAt = &at
	case ch.To == model.CallInProgress:
		if c.InitiatedAt == nil {
			c.InitiatedAt = &at
		}
		c.StartedAt = &at
	case IsFinal(ch.To):
		c.EndedAt = &at
		if ch.HangupCause != "" {
			c.HangupCause = &ch.HangupCause
		}
		if c.StartedAt != nil {
			d := int(at.Sub(*c.StartedAt) / time.Second)
			c.DurationSeconds = &d
		}
		c.LeaseOwner, c.LeaseExpiresAt = nil, nil
	}
	if ch.ErrorMessage != "" {
		msg := invalid.Storable(ch.ErrorMessage) // may quote a provider or a SIP peer
		c.ErrorMessage = &msg
	}
	if ch.RecordingURL != "" {
		c.RecordingURL = &ch.RecordingURL
	}
	if ch.Outcome.Summary != nil {
		summary := invalid.Storable(*ch.Outcome.Summary) // a model's words: kept, whatever bytes it sent
		c.Summary = &summary
	}
	if ch.Outcome.Metrics != nil {
		c.Metrics = ch.Outcome.Metrics
	}
	if len(ch.Outcome.Variables) > 0 {
		if c.Variables == nil {
			c.Variables = map[string]any{}
		}
		maps.Copy(c.Variables, ch.Outcome.Variables)
	}
	if p := ch.PreCall; p != nil {
		c.PreCallWebhookStatus = &p.Status
		if len(p.Variables) > 0 {
			for k, v := range p.Variables {
				c.Variables[k] = v
			}
			render(c, p.Agent)
		}
	}
	return nil
}
