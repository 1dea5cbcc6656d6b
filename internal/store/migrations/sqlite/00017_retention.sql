-- Retention (store.Retention, store.Singletons): how long an organization
-- keeps its calls' recordings and transcripts, how far the sweeper has got
-- through its calls, and the lease that lets one server at a time sweep.
-- The SQLite twin of postgres/00017_retention.sql.
--
-- organizations.recording_retention_days / transcript_retention_days: NULL
-- keeps them forever, else 1 to 3650 days after the call ended.
--
-- retention_cursors: per organization and kind ('recording' or
-- 'transcript'), the (ended_at, id) of the last call the sweeper is done
-- with. The sweeper reads the calls after it, in calls_org_ended_asc
-- order, up to the cutoff (now minus the days): each call is visited once
-- per kind, and no index on calls is added for it (a call's transcript
-- changes at every line; an index over it would make each of those writes
-- touch every index of calls). A call's ended_at is stamped when it ends,
-- and the cutoff is at least a day behind now, so no call ends behind a
-- cursor.
--
-- singletons: leases on work one server at a time does (name, the holder,
-- until when); a holder whose lease ran out loses it to the next claim.

-- +goose Up
ALTER TABLE organizations ADD COLUMN recording_retention_days INTEGER
    CHECK (recording_retention_days BETWEEN 1 AND 3650);
ALTER TABLE organizations ADD COLUMN transcript_retention_days INTEGER
    CHECK (transcript_retention_days BETWEEN 1 AND 3650);

CREATE TABLE retention_cursors (
    org_id   TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    kind     TEXT NOT NULL CHECK (kind IN ('recording', 'transcript')),
    ended_at TEXT NOT NULL,
    call_id  TEXT NOT NULL,
    PRIMARY KEY (org_id, kind)
) STRICT;

CREATE TABLE singletons (
    name        TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    lease_until TEXT NOT NULL
) STRICT;

-- +goose Down
DROP TABLE singletons;
DROP TABLE retention_cursors;
ALTER TABLE organizations DROP COLUMN transcript_retention_days;
ALTER TABLE organizations DROP COLUMN recording_retention_days;
