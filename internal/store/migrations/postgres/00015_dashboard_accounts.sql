-- Dashboard accounts (store.Users, store.Sessions): people who sign in to
-- the dashboard, and their browsers' sessions. An email signs in to one
-- organization, so it is unique across the deployment. A session is found
-- by the SHA-256 of its cookie's token; deleting a user or an organization
-- deletes its sessions.

-- +goose Up
CREATE TABLE users (
    id                   uuid PRIMARY KEY,
    org_id               uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email                text NOT NULL UNIQUE,
    password_hash        text NOT NULL,
    must_change_password boolean NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    UNIQUE (org_id, id)
);

CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL,
    user_id    uuid NOT NULL,
    hash       bytea NOT NULL UNIQUE,
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    FOREIGN KEY (org_id, user_id) REFERENCES users (org_id, id) ON DELETE CASCADE
);
CREATE INDEX sessions_user ON sessions (org_id, user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
DROP TABLE users;
