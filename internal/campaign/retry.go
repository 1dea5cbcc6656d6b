package campaign

import (
	"slices"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Hang-up causes that name a retry outcome (internal/call's causes; this
// package does not import the call plane).
const (
	causeNoAnswer  = "NO_ANSWER"
	causeBusy      = "BUSY"
	causeVoicemail = "VOICEMAIL_DETECTED"
)

// RetryOutcome names the retry outcome of an ended call: "" for a success
// (COMPLETED or TRANSFERRED), NO_ANSWER, BUSY, VOICEMAIL (hangupCause
// VOICEMAIL_DETECTED), or FAILED (any other end, CANCELED included).
//
// A call that reached voicemail ends COMPLETED with VOICEMAIL_DETECTED: the
// cause is read first, else retryOn's VOICEMAIL could never apply.
func RetryOutcome(callStatus string, hangupCause *string) string {
	cause := ""
	if hangupCause != nil {
		cause = *hangupCause
	}
	switch {
	case cause == causeVoicemail:
		return model.RetryVoicemail
	case callStatus == model.CallCompleted || callStatus == model.CallTransferred:
		return ""
	case callStatus == model.CallCanceled:
		return model.RetryFailed
	case cause == causeNoAnswer:
		return model.RetryNoAnswer
	case cause == causeBusy:
		return model.RetryBusy
	}
	return model.RetryFailed
}

// Next is what becomes of recipient r (in_progress, Attempts already
// counting the ended call) when its call ended so: completed; failed (the
// outcome is not in retryOn, or attempts reached maxAttempts); or pending,
// to be dialed again no sooner than ended + delaySeconds.
func Next(cfg model.CampaignConfig, r model.CampaignRecipient, callStatus string, hangupCause *string, ended time.Time) (status string, next *time.Time) {
	outcome := RetryOutcome(callStatus, hangupCause)
	retry := outcome != "" && slices.Contains(cfg.Retry.RetryOn, outcome) && r.Attempts < cfg.Retry.MaxAttempts
	switch {
	case retry:
	case outcome == "", callStatus == model.CallCompleted:
		// A voicemail not to be tried again ends as its call did: a
		// COMPLETED call (the agent may have left a message) completes
		// its recipient.
		return model.RecipientCompleted, nil
	default:
		return model.RecipientFailed, nil
	}
	at := ended.Add(time.Duration(cfg.Retry.DelaySeconds) * time.Second)
	return model.RecipientPending, &at
}
