package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const sipTrunkColumns = "id, org_id, friendly_name, host, port, transport, username, password, " +
	"inbound_username, inbound_password, inbound_allowed_cidrs, created_at, updated_at, " +
	"registration, registration_password, registration_contact_user, registration_state, " +
	"registration_expires_at, registration_error, registration_owner, registration_lease_until, calls_per_second"

func scanSIPTrunk(r rowScanner) (model.SIPTrunk, error) {
	var s model.SIPTrunk
	var regPassword []byte
	var contactUser, state *string
	st := &s.RegistrationStatus
	err := r.Scan(&s.ID, &s.OrgID, &s.FriendlyName, &s.Host, &s.Port, &s.Transport, &s.Username, &s.Password,
		&s.InboundUsername, &s.InboundPassword, documentDest{&s.InboundAllowedCIDRs},
		timeDest{&s.CreatedAt}, timeDest{&s.UpdatedAt},
		documentDest{&s.Registration}, &regPassword, &contactUser, &state,
		nullTimeDest{&st.ExpiresAt}, &st.LastError, &st.Owner, nullTimeDest{&st.LeaseUntil}, &s.CallsPerSecond)
	if s.Registration != nil {
		s.Registration.Password = regPassword
		if contactUser != nil {
			s.Registration.ContactUser = *contactUser
		}
	}
	if state != nil {
		st.State = *state
	}
	return s, err
}

// registrationSettings are the columns the API writes for a trunk's
// registration: the document, the sealed password and the contact user.
func registrationSettings(r *model.TrunkRegistration) (doc, password, contactUser any, err error) {
	if r == nil {
		return nil, nil, nil, nil
	}
	d, err := document(r)
	if err != nil {
		return nil, nil, nil, err
	}
	return d, secret(r.Password), r.ContactUser, nil
}

func (t *tx) CreateSIPTrunk(ctx context.Context, s *model.SIPTrunk) error {
	if s.ID == "" {
		s.ID = model.NewID()
	}
	s.CreatedAt, s.UpdatedAt = stamp(s.CreatedAt), stamp(s.UpdatedAt)
	cidrs, err := document(s.InboundAllowedCIDRs)
	if err != nil {
		return t.fail(err, "create sip trunk %s", s.ID)
	}
	reg, regPassword, contactUser, err := registrationSettings(s.Registration)
	if err != nil {
		return t.fail(err, "create sip trunk %s", s.ID)
	}
	// A new trunk has no registration status: no server has taken it yet.
	s.RegistrationStatus = model.RegistrationStatus{}
	_, err = t.exec(ctx, `INSERT INTO sip_trunks (`+sipTrunkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, NULL, ?)`,
		s.ID, s.OrgID, s.FriendlyName, s.Host, s.Port, s.Transport, s.Username, secret(s.Password),
		s.InboundUsername, secret(s.InboundPassword), cidrs, t.time(s.CreatedAt), t.time(s.UpdatedAt),
		reg, regPassword, contactUser, s.CallsPerSecond)
	if err != nil {
		return t.fail(err, "create sip trunk %s", s.ID)
	}
	return nil
}

func (t *tx) GetSIPTrunk(ctx context.Context, orgID, id string) (model.SIPTrunk, error) {
	if !uuids(orgID, id) {
		return model.SIPTrunk{}, notFound("get sip trunk %s", id)
	}
	return get(ctx, t, scanSIPTrunk, "get sip trunk "+id,
		`SELECT `+sipTrunkColumns+` FROM sip_trunks WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) GetSIPTrunks(ctx context.Context, orgID string, ids []string) ([]model.SIPTrunk, error) {
	out := []model.SIPTrunk{}
	if !uuids(orgID) {
		return out, nil
	}
	err := uuidBatches(ids, func(batch []any, marks string) error {
		found, err := all(ctx, t, scanSIPTrunk, "get sip trunks",
			`SELECT `+sipTrunkColumns+` FROM sip_trunks WHERE org_id = ? AND id IN (`+marks+`)`,
			append([]any{orgID}, batch...)...)
		out = append(out, found...)
		return err
	})
	return out, err
}

func (t *tx) ListSIPTrunks(ctx context.Context, orgID string, p store.Page) ([]model.SIPTrunk, int, error) {
	if !uuids(orgID) {
		return []model.SIPTrunk{}, 0, nil
	}
	return list(ctx, t, listing{
		columns: sipTrunkColumns,
		from:    "sip_trunks",
		where:   "org_id = ?",
		args:    []any{orgID},
		order:   newestFirst(p),
		page:    p,
	}, scanSIPTrunk, "list sip trunks")
}

func (t *tx) UpdateSIPTrunk(ctx context.Context, s *model.SIPTrunk) error {
	if !uuids(s.OrgID, s.ID) {
		return notFound("update sip trunk %s", s.ID)
	}
	s.UpdatedAt = stamp(s.UpdatedAt)
	cidrs, err := document(s.InboundAllowedCIDRs)
	if err != nil {
		return t.fail(err, "update sip trunk %s", s.ID)
	}
	reg, regPassword, contactUser, err := registrationSettings(s.Registration)
	if err != nil {
		return t.fail(err, "update sip trunk %s", s.ID)
	}
	// The registration's status columns are the registering server's
	// (SetSIPRegistrationStatus): settings never overwrite them.
	return t.change(ctx, "update sip trunk "+s.ID,
		`UPDATE sip_trunks SET friendly_name = ?, host = ?, port = ?, transport = ?, username = ?, password = ?,
			inbound_username = ?, inbound_password = ?, inbound_allowed_cidrs = ?, updated_at = ?,
			registration = ?, registration_password = ?, registration_contact_user = ?, calls_per_second = ?
		WHERE org_id = ? AND id = ?`,
		s.FriendlyName, s.Host, s.Port, s.Transport, s.Username, secret(s.Password),
		s.InboundUsername, secret(s.InboundPassword), cidrs, t.time(s.UpdatedAt),
		reg, regPassword, contactUser, s.CallsPerSecond, s.OrgID, s.ID)
}

// DeleteSIPTrunk deletes the trunk; the schema unassigns it from agents and
// phone numbers.
func (t *tx) DeleteSIPTrunk(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete sip trunk %s", id)
	}
	return t.change(ctx, "delete sip trunk "+id,
		`DELETE FROM sip_trunks WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) AnyInboundAuthTrunk(ctx context.Context) (bool, error) {
	n, err := t.count(ctx, "any inbound auth trunk", `SELECT count(*) FROM (SELECT 1 FROM sip_trunks WHERE inbound_username IS NOT NULL LIMIT 1) AS one`)
	return n > 0, err
}
