package campaign

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/suppression"
)

// Why the gate refused a dial. Each undoes the call it was about to place.
var (
	errNoLine     = errors.New("no line free for campaigns")
	errFull       = errors.New("the campaign is at its concurrency")
	errPaced      = errors.New("the campaign is at its calls per minute")
	errNotRunning = errors.New("the campaign is no longer running")
	errSuppressed = errors.New("the number is suppressed")
	errMoved      = errors.New("the recipient moved on")
)

// gate is the check a dial passes in the transaction that stores its call,
// under the organization's admission lock (callqueue holds it; every
// campaign call of the organization is decided under it, on whichever
// server): the call was admitted, not queued; the number is not
// suppressed (a suppression committed before this transaction is seen);
// the campaign still runs; the organization's live calls, this one
// included, leave the inbound reserve free (Lines); the campaign is under
// its concurrency and its pace; and the recipient is still pending with
// the attempts the dispatcher read, which it moves to in_progress with
// this call. So the rules hold exactly, and one attempt is one call, even
// when two servers plan the same campaign or a server dies mid-dial.
func gate(ctx context.Context, now time.Time, r model.CampaignRecipient) func(store.Tx, model.Call) error {
	return func(tx store.Tx, c model.Call) error {
		if c.Status != model.CallInitiated {
			return errNoLine
		}
		if suppressed, err := suppression.IsSuppressed(ctx, tx, r.OrgID, r.ToNumber); err != nil || suppressed {
			return cmp.Or(err, errSuppressed)
		}
		camp, err := tx.GetCampaign(ctx, r.OrgID, r.CampaignID)
		if err != nil {
			return err
		}
		if camp.Status != model.CampaignRunning {
			return errNotRunning
		}
		org, err := tx.GetOrg(ctx, r.OrgID)
		if err != nil {
			return err
		}
		lines, err := tx.CountLines(ctx, r.OrgID)
		if err != nil {
			return err
		}
		if lines.Live > Lines(org.ConcurrencyLimit, org.InboundReservePercent) {
			return errNoLine
		}
		if camp.Counts.InProgress >= Concurrency(camp.Config, org.ConcurrencyLimit) {
			return errFull
		}
		ok, next := Pace(camp.NextDialAt, now, camp.Config.CallsPerMinute)
		if !ok {
			return errPaced
		}
		if err := tx.PaceCampaign(ctx, r.OrgID, r.CampaignID, next); err != nil {
			return err
		}
		after := r
		after.Status, after.Attempts, after.NextAttemptAt, after.UpdatedAt = model.RecipientInProgress, r.Attempts+1, nil, now.UTC()
		after.CallIDs = append(append([]string{}, r.CallIDs...), c.ID)
		moved, err := tx.ChangeRecipient(ctx, &r, &after)
		if err != nil {
			return err
		}
		if !moved {
			return errMoved
		}
		return nil
	}
}
