package campaign

import (
	"context"
	"log/slog"

	"github.com/parley-voice/parley/internal/model"
)

// A campaign's life in the log: one line when it is started, paused,
// resumed, canceled or completed, with its ids and its recipients' counts
// at that moment; a pause the dispatcher made (the agent gone or disabled)
// is a WARN line with the reason. Its calls' own lines (callqueue) carry
// its campaign_id.

// logCampaign writes the line for c having reached its status (verb:
// "started", "paused", ...), at level, with attrs after the ids.
func logCampaign(ctx context.Context, log *slog.Logger, level slog.Level, c model.Campaign, verb string, attrs ...slog.Attr) {
	a := []slog.Attr{
		slog.String("campaign_id", c.ID), slog.String("org_id", c.OrgID), slog.String("agent_id", c.AgentID),
		slog.String("status", c.Status), slog.Int("total", c.Counts.Total), slog.Int("pending", c.Counts.Pending),
		slog.Int("completed", c.Counts.Completed), slog.Int("failed", c.Counts.Failed),
		slog.Int("expired", c.Counts.Expired), slog.Int("canceled", c.Counts.Canceled),
	}
	log.LogAttrs(ctx, level, "campaign "+verb, append(a, attrs...)...)
}

// logger is the service's log: the process's when none is set.
func (s *Service) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
