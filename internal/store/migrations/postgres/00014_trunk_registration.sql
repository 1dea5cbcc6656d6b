-- Outbound registration of SIP trunks. The settings (registration, a JSON
-- document without the password; registration_password, sealed;
-- registration_contact_user, unique because inbound INVITEs to it are
-- routed to the trunk) are written by the API; the status columns only by
-- the server holding the registration (registration_owner until
-- registration_lease_until).

-- +goose Up
ALTER TABLE sip_trunks ADD COLUMN registration jsonb;
ALTER TABLE sip_trunks ADD COLUMN registration_password bytea;
ALTER TABLE sip_trunks ADD COLUMN registration_contact_user text;
ALTER TABLE sip_trunks ADD COLUMN registration_state text;
ALTER TABLE sip_trunks ADD COLUMN registration_expires_at timestamptz;
ALTER TABLE sip_trunks ADD COLUMN registration_error text;
ALTER TABLE sip_trunks ADD COLUMN registration_owner text;
ALTER TABLE sip_trunks ADD COLUMN registration_lease_until timestamptz;
CREATE UNIQUE INDEX sip_trunks_registration_contact_user ON sip_trunks (registration_contact_user);

-- +goose Down
DROP INDEX sip_trunks_registration_contact_user;
ALTER TABLE sip_trunks DROP COLUMN registration_lease_until;
ALTER TABLE sip_trunks DROP COLUMN registration_owner;
ALTER TABLE sip_trunks DROP COLUMN registration_error;
ALTER TABLE sip_trunks DROP COLUMN registration_expires_at;
ALTER TABLE sip_trunks DROP COLUMN registration_state;
ALTER TABLE sip_trunks DROP COLUMN registration_contact_user;
ALTER TABLE sip_trunks DROP COLUMN registration_password;
ALTER TABLE sip_trunks DROP COLUMN registration;
