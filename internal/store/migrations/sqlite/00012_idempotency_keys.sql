-- Idempotency-Key of POST /calls and POST /messages (conventions.md,
-- "Retries and text"): the first request's resource and response, written
-- in the transaction that creates the resource. Keys are per organization
-- and route; rows older than 24 hours are replaced or deleted as the
-- organization uses new keys. Deleting the organization deletes its keys.

-- +goose Up
CREATE TABLE idempotency_keys (
    org_id       TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    status_code  INTEGER NOT NULL,
    response     TEXT,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (org_id, scope, key)
) STRICT;
CREATE INDEX idempotency_keys_age ON idempotency_keys (org_id, created_at);

-- +goose Down
DROP TABLE idempotency_keys;
