-- Idempotency-Key of POST /calls and POST /messages (conventions.md,
-- "Retries and text"): the first request's resource and response, written
-- in the transaction that creates the resource. Keys are per organization
-- and route; rows older than 24 hours are replaced or deleted as the
-- organization uses new keys. Deleting the organization deletes its keys.

-- +goose Up
CREATE TABLE idempotency_keys (
    org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    scope        text NOT NULL,
    key          text NOT NULL,
    request_hash text NOT NULL,
    resource_id  text NOT NULL,
    status_code  integer NOT NULL,
    response     text,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (org_id, scope, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (org_id, created_at);

-- +goose Down
DROP TABLE idempotency_keys;
