package telephony

import (
	"context"
	"errors"
	"strings"

	"github.com/parley-voice/parley/internal/store"
)

// resolveRegistered routes an INVITE sent to the contact of a trunk's
// registration: the provider (or registrar) sends calls for the trunk to
// the Contact we registered, so the Request-URI user is our contact user,
// not the number dialed. The number is the To header's when it is one of
// the trunk's numbers, else the trunk's only number; a trunk with several
// numbers and a To that names none of them is 404. found is false when
// user is no registration's contact user (routing goes on by number).
func (p *Phone) resolveRegistered(ctx context.Context, user, toUser string, r *route) (found bool, err error) {
	user, _, _ = strings.Cut(user, ";")
	if user == "" {
		return false, nil
	}
	err = p.Store.View(ctx, func(tx store.Tx) error {
		t, err := tx.GetSIPTrunkByContactUser(ctx, user)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		r.trunk = &t
		if e164 := normalizeNumber(toUser); e164 != "" {
			n, err := tx.GetPhoneNumberByE164(ctx, e164)
			switch {
			case err == nil && n.OrgID == t.OrgID && n.SIPTrunkID != nil && *n.SIPTrunkID == t.ID:
				return routeNumber(ctx, tx, n, r)
			case err != nil && !errors.Is(err, store.ErrNotFound):
				return err
			}
		}
		numbers, total, err := tx.ListPhoneNumbers(ctx, t.OrgID, store.PhoneNumberFilter{
			Page: store.Page{Number: 1, Size: 2}, SIPTrunkID: t.ID,
		})
		if err != nil {
			return err
		}
		if total != 1 {
			return &refusal{code: 404, reason: "Not Found", msg: "the registered trunk has no number matching the call"}
		}
		return routeNumber(ctx, tx, numbers[0], r)
	})
	return found, err
}
