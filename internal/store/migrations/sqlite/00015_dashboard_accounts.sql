-- Dashboard accounts (store.Users, store.Sessions): people who sign in to
-- the dashboard, and their browsers' sessions. An email signs in to one
-- organization, so it is unique across the deployment. A session is found
-- by the SHA-256 of its cookie's token; deleting a user or an organization
-- deletes its sessions.

-- +goose Up
CREATE TABLE users (
    id                   TEXT PRIMARY KEY,
    org_id               TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email                TEXT NOT NULL UNIQUE,
    password_hash        TEXT NOT NULL,
    must_change_password INTEGER NOT NULL,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    UNIQUE (org_id, id)
) STRICT;

CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    hash       BLOB NOT NULL UNIQUE,
    csrf_token TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES users (org_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX sessions_user ON sessions (org_id, user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
DROP TABLE users;
