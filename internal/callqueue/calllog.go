package callqueue

import (
	"context"
	"log/slog"

	"github.com/parley-voice/parley/internal/model"
)

// The call's life in the log: one line when it is placed (or comes in),
// one when it is answered, one when it ends; a call that ends FAILED ends
// with a WARN line, so an operator filtering on level sees every failure
// and nothing else. Every line carries the same ids, whichever server and
// path (worker, cancel, reaper, refusal) wrote the change, so one call's
// lines are found by its call_id and a campaign's by campaign_id. Phone
// numbers stay out: the log is not where an operator's callers' numbers
// should spread to.

// callAttrs are the ids every call line carries.
func callAttrs(c model.Call) []slog.Attr {
	a := []slog.Attr{
		slog.String("call_id", c.ID), slog.String("org_id", c.OrgID),
		slog.String("agent_id", c.AgentID), slog.String("direction", c.Direction),
	}
	if c.CampaignID != nil {
		a = append(a, slog.String("campaign_id", *c.CampaignID))
	}
	return a
}

// logPlaced: an outbound call was admitted (INITIATED) or queued (QUEUED).
func (q *Queue) logPlaced(c model.Call) {
	q.o.Logger.LogAttrs(context.Background(), slog.LevelInfo, "call placed",
		append(callAttrs(c), slog.String("status", c.Status))...)
}

// logReceived: an inbound call was admitted.
func (q *Queue) logReceived(c model.Call) {
	q.o.Logger.LogAttrs(context.Background(), slog.LevelInfo, "call received", callAttrs(c)...)
}

// logAnswered: the call is IN_PROGRESS; ring_s is how long it took from
// its dialing.
func (q *Queue) logAnswered(c model.Call) {
	attrs := callAttrs(c)
	if c.InitiatedAt != nil && c.StartedAt != nil {
		attrs = append(attrs, slog.Float64("ring_s", c.StartedAt.Sub(*c.InitiatedAt).Seconds()))
	}
	q.o.Logger.LogAttrs(context.Background(), slog.LevelInfo, "call answered", attrs...)
}

// logEnded: the call reached a final status, written here. FAILED is a
// WARN line "call failed" with the error message; any other end is INFO
// "call ended". duration_s is the answered time (0 when never answered).
func (q *Queue) logEnded(c model.Call) {
	attrs := append(callAttrs(c), slog.String("status", c.Status), slog.String("cause", deref(c.HangupCause)))
	duration := 0
	if c.DurationSeconds != nil {
		duration = *c.DurationSeconds
	}
	attrs = append(attrs, slog.Int("duration_s", duration))
	if c.Status == model.CallFailed {
		attrs = append(attrs, slog.String("error", deref(c.ErrorMessage)))
		q.o.Logger.LogAttrs(context.Background(), slog.LevelWarn, "call failed", attrs...)
		return
	}
	q.o.Logger.LogAttrs(context.Background(), slog.LevelInfo, "call ended", attrs...)
}
