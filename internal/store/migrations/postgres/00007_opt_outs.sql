-- Numbers that texted an opt-out keyword (STOP, ...) to a messaging
-- connection: nothing more is sent to them through it until they opt back
-- in (START). The PostgreSQL twin of sqlite/00007_opt_outs.sql. Deleting
-- the connection, or the organization, deletes its opt-outs.

-- +goose Up
CREATE TABLE message_opt_outs (
    org_id                  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    messaging_connection_id text NOT NULL REFERENCES messaging_connections (id) ON DELETE CASCADE,
    number                  text NOT NULL,
    keyword                 text NOT NULL,
    created_at              timestamptz NOT NULL,
    PRIMARY KEY (org_id, messaging_connection_id, number)
);

-- +goose Down
DROP TABLE message_opt_outs;
