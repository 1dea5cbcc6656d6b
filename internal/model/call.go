package model

import "time"

// Call directions.
const (
	Inbound  = "INBOUND"
	Outbound = "OUTBOUND"
)

// Call statuses. QUEUED waits for a line; INITIATED, RINGING and IN_PROGRESS
// hold one (they count against the organization's concurrencyLimit); the
// last four are final.
const (
	CallQueued      = "QUEUED"
	CallInitiated   = "INITIATED"
	CallRinging     = "RINGING"
	CallInProgress  = "IN_PROGRESS"
	CallCompleted   = "COMPLETED"
	CallTransferred = "TRANSFERRED"
	CallFailed      = "FAILED"
	CallCanceled    = "CANCELED"
)

// LiveCallStatuses are the statuses that hold a line.
var LiveCallStatuses = []string{CallInitiated, CallRinging, CallInProgress}

// Webhook delivery statuses of a call (null until the call reaches the stage).
const (
	WebhookSent    = "sent"
	WebhookFailed  = "failed"
	WebhookSkipped = "skipped"
)

// Call is one phone call and its record.
type Call struct {
	ID                string
	OrgID             string
	AgentID           string
	AgentName         string
	AgentCallerIDName *string // the callerIdName the call was placed with
	SIPTrunkID        *string
	Direction         string
	Status            string
	FromNumber        string
	ToNumber          string
	// CampaignID is the campaign that placed an outbound call, if any.
	CampaignID *string
	// DialedAgentID is set on inbound calls routed to agent-<uuid>.
	DialedAgentID *string
	Variables     map[string]any
	// Prompt and FirstMessage are the agent's templates rendered with
	// Variables when the call was created (FirstMessage nil when none).
	Prompt       string
	FirstMessage *string
	RecordingURL *string
	HangupCause  *string
	ErrorMessage *string
	Transcript   []map[string]any
	Summary      *string
	Metrics      map[string]any

	InitiatedAt     *time.Time
	StartedAt       *time.Time
	EndedAt         *time.Time
	DurationSeconds *int

	PreCallWebhookStatus  *string
	PostCallWebhookStatus *string
	// PostCallWebhookURL is the agent's URL captured when the call ended;
	// a call ended with a URL and no PostCallWebhookStatus awaits delivery.
	PostCallWebhookURL *string

	// LeaseOwner is the node running a live call; it renews LeaseExpiresAt
	// while it does. A live call whose lease expired lost its node.
	LeaseOwner     *string
	LeaseExpiresAt *time.Time

	// ReservesLine: the call holds a second line, for the far end it dials
	// over the loopback trunk, from its admission until that far end's
	// inbound leg is admitted onto it (or the call ends). Only creating
	// the call sets it; only store.Calls.ReleaseReservedLine clears it.
	ReservesLine bool
	// LoopbackCallerID is, on an inbound leg that came over the loopback
	// trunk from one of our own calls, that caller leg's id.
	LoopbackCallerID *string

	CreatedAt time.Time
	UpdatedAt time.Time
}
