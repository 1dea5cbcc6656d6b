-- Calls, the PostgreSQL twin of sqlite/00002_calls.sql.
--
-- A call keeps agent_id, agent_name and sip_trunk_id as they were when it
-- was placed: no foreign key, so deleting the agent or the trunk leaves the
-- record as it was. Deleting the organization deletes its calls.
-- variables, transcript and metrics are json, never NULL (an empty document
-- is {} or []): json rather than jsonb because they are only ever written and
-- read whole, json keeps the text as written (no conversion either way) and
-- it accepts \u0000 in strings, which jsonb refuses. status and direction are
-- COLLATE "C" so they sort by bytes, as on SQLite, and their indexes serve
-- both the filters and the sorts.
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
--                              only live calls are in it
--   calls_live_owner           a node's live calls (renewing, reclaiming)
--   calls_queued               the queue, oldest first, per organization
--   calls_post_call_webhooks   the post-call webhook outbox
-- The live-status list is written out the same way in the queries, so both
-- engines can match them to the partial indexes. lease_expires_at and
-- updated_at are in no index, so renewing a lease can be a HOT update.

-- +goose Up
CREATE TABLE calls (
    id                       uuid PRIMARY KEY,
    org_id                   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id                 uuid NOT NULL,
    agent_name               text NOT NULL,
    agent_caller_id_name     text,
    sip_trunk_id             uuid,
    direction                text COLLATE "C" NOT NULL,
    status                   text COLLATE "C" NOT NULL,
    from_number              text NOT NULL,
    to_number                text NOT NULL,
    dialed_agent_id          uuid,
    variables                json NOT NULL,
    prompt                   text NOT NULL,
    first_message            text,
    recording_url            text,
    hangup_cause             text,
    error_message            text,
    transcript               json NOT NULL,
    summary                  text,
    metrics                  json NOT NULL,
    initiated_at             timestamptz,
    started_at               timestamptz,
    ended_at                 timestamptz,
    duration_seconds         integer,
    pre_call_webhook_status  text,
    post_call_webhook_status text,
    post_call_webhook_url    text,
    lease_owner              text,
    lease_expires_at         timestamptz,
    created_at               timestamptz NOT NULL,
    updated_at               timestamptz NOT NULL
);
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
