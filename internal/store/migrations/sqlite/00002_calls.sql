-- Calls, the SQLite twin of postgres/00002_calls.sql.
--
-- A call keeps agent_id, agent_name and sip_trunk_id as they were when it
-- was placed: no foreign key, so deleting the agent or the trunk leaves the
-- record as it was. Deleting the organization deletes its calls.
-- variables, transcript and metrics are JSON text, never NULL: an empty
-- document is {} or [].
--
-- Indexes, for lists over millions of calls per organization:
--   calls_org_created          the default list (created_at, then id), and
--                              createdFrom/createdTo
--   calls_org_status_created   status filter, newest first
--   calls_org_agent_created    agentId filter, newest first
--   calls_org_from/to_created  fromNumber / toNumber filters (one caller's
--                              calls), newest first
--   calls_org_trunk_created    sipTrunkId filter, newest first
--   calls_org_started/ended/duration_desc and _asc
--                              sorts by a nullable key, nulls last. The list
--                              orders by (key IS NULL), key, id: no one index
--                              can give nulls last in both directions, so
--                              each direction has its own
--   calls_org_status_id, calls_org_direction_id
--                              sorts by status or direction, ties by id
--   calls_live                 live calls (they hold a line): counting an
--                              organization's, and the lease scans. Small:
--                              only live calls are in it
--   calls_live_owner           a node's live calls (renewing, reclaiming)
--   calls_queued               the queue, oldest first, per organization
--   calls_post_call_webhooks   the post-call webhook outbox
-- The live-status list is written out the same way in the queries, so both
-- engines can match them to the partial indexes. lease_expires_at is in no
-- index, so renewing a lease touches none.
--
-- call_counts holds each organization's number of calls, kept by triggers in
-- the same transaction as the calls themselves, so the total of an
-- unfiltered list (the call log's first page) is read, not counted over
-- every call of the organization.

-- +goose Up
CREATE TABLE calls (
    id                       TEXT PRIMARY KEY,
    org_id                   TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id                 TEXT NOT NULL,
    agent_name               TEXT NOT NULL,
    agent_caller_id_name     TEXT,
    sip_trunk_id             TEXT,
    direction                TEXT NOT NULL,
    status                   TEXT NOT NULL,
    from_number              TEXT NOT NULL,
    to_number                TEXT NOT NULL,
    dialed_agent_id          TEXT,
    variables                TEXT NOT NULL,
    prompt                   TEXT NOT NULL,
    first_message            TEXT,
    recording_url            TEXT,
    hangup_cause             TEXT,
    error_message            TEXT,
    transcript               TEXT NOT NULL,
    summary                  TEXT,
    metrics                  TEXT NOT NULL,
    initiated_at             TEXT,
    started_at               TEXT,
    ended_at                 TEXT,
    duration_seconds         INTEGER,
    pre_call_webhook_status  TEXT,
    post_call_webhook_status TEXT,
    post_call_webhook_url    TEXT,
    lease_owner              TEXT,
    lease_expires_at         TEXT,
    created_at               TEXT NOT NULL,
    updated_at               TEXT NOT NULL
) STRICT;
CREATE INDEX calls_org_created ON calls (org_id, created_at, id);
CREATE INDEX calls_org_status_created ON calls (org_id, status, created_at, id);
CREATE INDEX calls_org_agent_created ON calls (org_id, agent_id, created_at, id);
CREATE INDEX calls_org_from_created ON calls (org_id, from_number, created_at, id);
CREATE INDEX calls_org_to_created ON calls (org_id, to_number, created_at, id);
CREATE INDEX calls_org_trunk_created ON calls (org_id, sip_trunk_id, created_at, id);
CREATE INDEX calls_org_started_desc ON calls (org_id, (started_at IS NULL) DESC, started_at, id);
CREATE INDEX calls_org_started_asc ON calls (org_id, (started_at IS NULL), started_at, id);
CREATE INDEX calls_org_ended_desc ON calls (org_id, (ended_at IS NULL) DESC, ended_at, id);
CREATE INDEX calls_org_ended_asc ON calls (org_id, (ended_at IS NULL), ended_at, id);
CREATE INDEX calls_org_duration_desc ON calls (org_id, (duration_seconds IS NULL) DESC, duration_seconds, id);
CREATE INDEX calls_org_duration_asc ON calls (org_id, (duration_seconds IS NULL), duration_seconds, id);
CREATE INDEX calls_org_status_id ON calls (org_id, status, id);
CREATE INDEX calls_org_direction_id ON calls (org_id, direction, id);
CREATE INDEX calls_live ON calls (org_id)
    WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS');
CREATE INDEX calls_live_owner ON calls (lease_owner)
    WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS');
CREATE INDEX calls_queued ON calls (org_id, created_at, id)
    WHERE status = 'QUEUED';
CREATE INDEX calls_post_call_webhooks ON calls (ended_at, id)
    WHERE post_call_webhook_url IS NOT NULL AND post_call_webhook_status IS NULL AND ended_at IS NOT NULL;

CREATE TABLE call_counts (
    org_id TEXT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    calls  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- +goose StatementBegin
CREATE TRIGGER calls_count_insert AFTER INSERT ON calls
BEGIN
    INSERT INTO call_counts (org_id, calls) VALUES (NEW.org_id, 1)
        ON CONFLICT (org_id) DO UPDATE SET calls = calls + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER calls_count_delete AFTER DELETE ON calls
BEGIN
    UPDATE call_counts SET calls = calls - 1 WHERE org_id = OLD.org_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE call_counts;
DROP TABLE calls;
