-- Outbound calls per second per trunk, shared by every server: the
-- PostgreSQL twin of sqlite/00018_trunk_pacing.sql. The row of a trunk is
-- held (FOR UPDATE) from the read of next_invite_at to its write.

-- +goose Up
CREATE TABLE trunk_pacing (
    trunk          text PRIMARY KEY,
    next_invite_at timestamptz NOT NULL
);
ALTER TABLE sip_trunks ADD COLUMN calls_per_second double precision CHECK (calls_per_second >= 0);

-- +goose Down
ALTER TABLE sip_trunks DROP COLUMN calls_per_second;
DROP TABLE trunk_pacing;
