package sms

import (
	"context"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// Default send limits: enough for any conversation, low enough that two
// agents texting each other in a loop, or a runaway script, stop quickly.
const (
	DefaultOrgPerMinute         = 60 // outbound messages per organization per minute
	DefaultRecipientPerHour     = 20 // outbound messages to one number per hour
	rateWindowOrg, rateWindowTo = time.Minute, time.Hour
)

// RateLimitError is a send refused by a limit (429 rate_limited).
type RateLimitError struct{ Message string }

func (e *RateLimitError) Error() string { return e.Message }

// checkRates refuses a send over the organization's per-minute limit or the
// recipient's hourly cap. Counting happens outside the send's transaction,
// so concurrent sends may pass a limit by a few: it is a brake, not a
// quota.
func (s *Messages) checkRates(ctx context.Context, orgID, to string) error {
	perMinute, perHour := s.OrgPerMinute, s.RecipientPerHour
	if perMinute <= 0 {
		perMinute = DefaultOrgPerMinute
	}
	if perHour <= 0 {
		perHour = DefaultRecipientPerHour
	}
	now := time.Now()
	return s.Store.View(ctx, func(tx store.Tx) error {
		n, err := tx.CountMessagesSince(ctx, orgID, "", now.Add(-rateWindowOrg))
		if err != nil {
			return err
		}
		if n >= perMinute {
			return &RateLimitError{fmt.Sprintf("the organization may send at most %d messages a minute; try again shortly", perMinute)}
		}
		if n, err = tx.CountMessagesSince(ctx, orgID, to, now.Add(-rateWindowTo)); err != nil {
			return err
		}
		if n >= perHour {
			return &RateLimitError{fmt.Sprintf("at most %d messages an hour may go to one number", perHour)}
		}
		return nil
	})
}
