package model

import "time"

// Campaign statuses.
const (
	CampaignDraft     = "draft"
	CampaignRunning   = "running"
	CampaignPaused    = "paused"
	CampaignCompleted = "completed"
	CampaignCanceled  = "canceled"
)

// Campaign recipient statuses. Pending and in_progress are unfinished;
// the rest are final.
const (
	RecipientPending    = "pending"
	RecipientInProgress = "in_progress"
	RecipientCompleted  = "completed"
	RecipientFailed     = "failed"
	RecipientSuppressed = "suppressed"
	RecipientExpired    = "expired"
	RecipientCanceled   = "canceled"
)

// RecipientStatuses lists every recipient status, in the order of
// CampaignCounts' keys.
var RecipientStatuses = []string{RecipientPending, RecipientInProgress, RecipientCompleted,
	RecipientFailed, RecipientSuppressed, RecipientExpired, RecipientCanceled}

// Campaign is a list of numbers an agent calls: the settings of the
// campaign (Config, a document), the columns the store filters on, the
// counts of its recipients per status (kept by the store in the
// transaction of every recipient change) and the dispatcher's bookkeeping.
type Campaign struct {
	ID          string
	OrgID       string
	AgentID     string
	Name        string
	Description *string
	Status      string
	StartAt     *time.Time
	EndAt       *time.Time
	Config      CampaignConfig
	Counts      CampaignCounts

	CreatedAt   time.Time
	UpdatedAt   time.Time
	StartedAt   *time.Time
	CompletedAt *time.Time

	// NextDialAt paces callsPerMinute: the theoretical time of the next
	// dial (GCRA); a dial is allowed while it is not later than now plus
	// the burst the pace allows. Written only with a dial.
	NextDialAt time.Time
	// DispatchOwner holds the campaign's dispatch (one server plans its
	// dials at a time) until DispatchUntil.
	DispatchOwner *string
	DispatchUntil *time.Time
	// WebhookStatus is the campaign_completed delivery: nil while none is
	// owed or until it is attempted once the campaign finished with a
	// webhookUrl; then sent, failed or skipped.
	WebhookStatus *string
}

// CampaignConfig is the settings of a campaign that no query filters on.
type CampaignConfig struct {
	FromNumbers    []string        `json:"fromNumbers"`
	Timezone       string          `json:"timezone"`
	CallingWindows []CallingWindow `json:"callingWindows"`
	MaxConcurrency *int            `json:"maxConcurrency,omitempty"`
	CallsPerMinute int             `json:"callsPerMinute"`
	Retry          CampaignRetry   `json:"retry"`
	Variables      map[string]any  `json:"variables"`
	WebhookURL     *string         `json:"webhookUrl,omitempty"`
}

// CallingWindow is a span of local time on some days of the week in which
// a recipient may be called. Days are "mon".."sun"; Start and End are
// "HH:MM", Start before End.
type CallingWindow struct {
	Days  []string `json:"days"`
	Start string   `json:"start"`
	End   string   `json:"end"`
}

// CampaignRetry says when an attempt that did not complete is made again.
// RetryOn holds outcomes: NO_ANSWER, BUSY, VOICEMAIL, FAILED.
type CampaignRetry struct {
	MaxAttempts  int      `json:"maxAttempts"`
	DelaySeconds int      `json:"delaySeconds"`
	RetryOn      []string `json:"retryOn"`
}

// Retry outcomes (CampaignRetry.RetryOn).
const (
	RetryNoAnswer  = "NO_ANSWER"
	RetryBusy      = "BUSY"
	RetryVoicemail = "VOICEMAIL"
	RetryFailed    = "FAILED"
)

// CampaignCounts counts a campaign's recipients per status.
type CampaignCounts struct {
	Total      int `json:"total"`
	Pending    int `json:"pending"`
	InProgress int `json:"inProgress"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Suppressed int `json:"suppressed"`
	Expired    int `json:"expired"`
	Canceled   int `json:"canceled"`
}

// CampaignRecipient is one number of a campaign and how calling it went.
type CampaignRecipient struct {
	ID         string
	OrgID      string
	CampaignID string
	ToNumber   string
	Variables  map[string]any
	Timezone   *string // the recipient's own IANA zone, when given
	Status     string
	Attempts   int
	// LastHangupCause is the hangupCause of the last attempt's call.
	LastHangupCause *string
	// NextAttemptAt is when a pending recipient may be dialed next (nil:
	// at once); the dispatcher pushes it to the next calling window.
	NextAttemptAt *time.Time
	// CallIDs are the attempts' calls, oldest first; the last is the
	// one an in_progress recipient waits on.
	CallIDs   []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Suppression is a number of the organization's do-not-call list: no
// campaign dials it and POST /calls refuses it.
type Suppression struct {
	ID        string
	OrgID     string
	Number    string
	Reason    *string
	CreatedAt time.Time
}
