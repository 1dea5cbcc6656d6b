-- Outbound calls per second per trunk, shared by every server: the
-- PostgreSQL twin of sqlite/00018_trunk_pacing.sql. The row of a trunk is
-- held (FOR UPDATE) from the read of next_invite_at to its write.

-- +goose Up
CREATE TABLE trunk_pacing (
    trunk          text PRIMARY KEY,
    next_invite_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE trunk_pacing;
