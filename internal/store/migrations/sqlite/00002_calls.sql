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
--   calls_org_started/ended/duration
--                              sorts by a nullable key, nulls last: the
--                              index serves the descending order (the
--                              default); ascending falls back to a sort
--   calls_org_status_id, calls_org_direction_id
--                              sorts by status or direction, ties by id
--   calls_live                 live calls (they hold a line): counting an
--                              organization's, and the lease scans. Small:
--                              only live calls are in it. lease_expires_at is
--                              left out of every index so that renewing a
--                              lease touches no index
--   calls_live_owner           a node's live calls (renewing, reclaiming)
--   calls_queued               the queue, oldest first, per organization
--   calls_post_call_webhooks   the post-call webhook outbox
-- The live-status list is written out the same way in the queries, so both
-- engines can match them to the partial indexes.

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
CREATE INDEX calls_org_started ON calls (org_id, (started_at IS NULL) DESC, started_at, id);
CREATE INDEX calls_org_ended ON calls (org_id, (ended_at IS NULL) DESC, ended_at, id);
CREATE INDEX calls_org_duration ON calls (org_id, (duration_seconds IS NULL) DESC, duration_seconds, id);
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

-- +goose Down
DROP TABLE calls;
