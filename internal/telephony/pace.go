package telephony

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/parley-voice/parley/internal/store"
)

// Pacing outbound INVITEs. Carriers limit the calls per second a trunk may
// start and refuse (or bill for) the excess, whichever server sent it. So
// the limit is kept in the database, one row per trunk (store.TrunkPacing):
// before an INVITE goes out, its server claims the trunk's next slot in one
// short transaction, a GCRA like campaigns' pace: the row holds the
// theoretical time of the next INVITE, a claim takes
// at = max(now, next - burst) and moves next to max(next, now) + 1/rate,
// and the INVITE waits until at. The burst is one second's worth (at least
// one INVITE), so a limit of 10 sends 10 at once, then one every 100 ms.
// Calls waiting for a slot wait in order of their claims, and a call
// ended while it waits gives its slot up unused.

// paceSlot is the GCRA claim: when an INVITE claimed at now may go out,
// and the trunk's new theoretical next time.
func paceSlot(next, now time.Time, perSecond float64) (at, newNext time.Time) {
	interval := time.Duration(float64(time.Second) / perSecond)
	burst := time.Duration(max(int(perSecond), 1)-1) * interval
	at = next.Add(-burst)
	if at.Before(now) {
		at = now
	}
	if next.Before(now) {
		next = now
	}
	return at, next.Add(interval)
}

// paceKey names tr's row: a stored trunk by id, the default trunk by
// where it sends (every server has the same flags).
func paceKey(tr Trunk) string {
	if tr.ID != nil {
		return "trunk:" + *tr.ID
	}
	return "default:" + tr.Host + ":" + strconv.Itoa(tr.Port) + "/" + tr.Transport
}

// awaitInviteSlot claims tr's next INVITE slot and waits for it (at once
// when the trunk has no limit: its callsPerSecond, else --sip-trunk-cps). It returns ctx's error when the call ends
// while it waits.
func (p *Phone) awaitInviteSlot(ctx context.Context, tr Trunk) error {
	rate := p.TrunkCPS
	if tr.CallsPerSecond != nil {
		rate = *tr.CallsPerSecond // the trunk's own, 0 unlimited
	}
	if rate <= 0 {
		return nil
	}
	var at time.Time
	key := paceKey(tr)
	err := p.Store.Update(ctx, func(tx store.Tx) error {
		next, err := tx.LockTrunkPace(ctx, key)
		if err != nil {
			return err
		}
		var newNext time.Time
		at, newNext = paceSlot(next, time.Now(), rate)
		return tx.SetTrunkPace(ctx, key, newNext)
	})
	if err != nil {
		return fmt.Errorf("claim an INVITE slot of the trunk (its callsPerSecond): %w", err)
	}
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	p.log().Debug("INVITE waits for the trunk's calls-per-second limit", "trunk", key, "wait", wait.String())
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
