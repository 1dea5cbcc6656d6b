package sqlstore

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// RegisteringTrunks lists every trunk, in any organization, that has
// registration settings, enabled or not.
func (t *tx) RegisteringTrunks(ctx context.Context) ([]model.SIPTrunk, error) {
	return all(ctx, t, scanSIPTrunk, "list registering sip trunks",
		`SELECT `+sipTrunkColumns+` FROM sip_trunks WHERE registration IS NOT NULL ORDER BY created_at, id`)
}

// GetSIPTrunkByContactUser finds the trunk registering contact user user,
// in any organization.
func (t *tx) GetSIPTrunkByContactUser(ctx context.Context, user string) (model.SIPTrunk, error) {
	return get(ctx, t, scanSIPTrunk, "get sip trunk by contact user",
		`SELECT `+sipTrunkColumns+` FROM sip_trunks WHERE registration_contact_user = ? AND registration IS NOT NULL`, user)
}

// ClaimSIPRegistration takes or renews owner's hold on the trunk's
// registration until until: when nobody holds it, owner does, or the
// holder's lease ended before now (any holder when force).
func (t *tx) ClaimSIPRegistration(ctx context.Context, orgID, trunkID, owner string, now, until time.Time, force bool) (bool, error) {
	if !uuids(orgID, trunkID) {
		return false, nil
	}
	res, err := t.exec(ctx, `UPDATE sip_trunks SET registration_owner = ?, registration_lease_until = ?
		WHERE org_id = ? AND id = ? AND registration IS NOT NULL
		AND (? OR registration_owner IS NULL OR registration_owner = ? OR registration_lease_until < ?)`,
		owner, t.time(until), orgID, trunkID, force, owner, t.time(now))
	if err != nil {
		return false, t.fail(err, "claim the registration of sip trunk %s", trunkID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, t.fail(err, "claim the registration of sip trunk %s", trunkID)
	}
	return n == 1, nil
}

// SetSIPRegistrationStatus writes the registration's state, expiry and
// last error, if owner holds it.
func (t *tx) SetSIPRegistrationStatus(ctx context.Context, orgID, trunkID, owner string, st model.RegistrationStatus) error {
	if !uuids(orgID, trunkID) {
		return notFound("registration of sip trunk %s", trunkID)
	}
	return t.change(ctx, "set the registration status of sip trunk "+trunkID,
		`UPDATE sip_trunks SET registration_state = ?, registration_expires_at = ?, registration_error = ?
		WHERE org_id = ? AND id = ? AND registration_owner = ?`,
		st.State, t.nullTime(st.ExpiresAt), st.LastError, orgID, trunkID, owner)
}

// ReleaseSIPRegistration gives owner's hold up, leaving state behind
// (expiry and error cleared). Not holding it is not an error.
func (t *tx) ReleaseSIPRegistration(ctx context.Context, orgID, trunkID, owner, state string) error {
	if !uuids(orgID, trunkID) {
		return nil
	}
	_, err := t.exec(ctx, `UPDATE sip_trunks SET registration_state = ?, registration_expires_at = NULL,
		registration_error = NULL, registration_owner = NULL, registration_lease_until = NULL
		WHERE org_id = ? AND id = ? AND registration_owner = ?`, state, orgID, trunkID, owner)
	if err != nil {
		return t.fail(err, "release the registration of sip trunk %s", trunkID)
	}
	return nil
}
