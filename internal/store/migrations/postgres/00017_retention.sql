-- Retention (store.Retention, store.Singletons), the PostgreSQL twin of
-- sqlite/00017_retention.sql (which says what each part is for).
--
-- Each sweep batch is its own short transaction: it reads up to a batch of
-- calls after the cursor through calls_org_ended_asc, then writes those
-- calls' recording_url or transcript and the cursor. No lock is held
-- between batches, nor while a recording is deleted from disk or the
-- object store.

-- +goose Up
ALTER TABLE organizations ADD COLUMN recording_retention_days integer
    CHECK (recording_retention_days BETWEEN 1 AND 3650);
ALTER TABLE organizations ADD COLUMN transcript_retention_days integer
    CHECK (transcript_retention_days BETWEEN 1 AND 3650);

CREATE TABLE retention_cursors (
    org_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind     text NOT NULL CHECK (kind IN ('recording', 'transcript')),
    ended_at timestamptz NOT NULL,
    call_id  uuid NOT NULL,
    PRIMARY KEY (org_id, kind)
);

CREATE TABLE singletons (
    name        text PRIMARY KEY,
    owner       text NOT NULL,
    lease_until timestamptz NOT NULL
);

-- +goose Down
DROP TABLE singletons;
DROP TABLE retention_cursors;
ALTER TABLE organizations DROP COLUMN transcript_retention_days;
ALTER TABLE organizations DROP COLUMN recording_retention_days;
