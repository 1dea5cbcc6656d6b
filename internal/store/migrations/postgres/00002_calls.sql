-- Calls, the PostgreSQL twin of sqlite/00002_calls.sql.
--
-- A call keeps agent_id, agent_name and sip_trunk_id as they were when it
-- was placed: no foreign key, so deleting the agent or the trunk leaves the
-- record as it was. Deleting the organization deletes its calls.
-- variables, transcript and metrics are json, never NULL (an empty document
-- is {} or []): json rather than jsonb because they are only ever written and
-- read whole, json keeps the text as written (no conversion either way), and
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
-- index, so renewing a lease touches none and a renewal can be a HOT update.
--
-- call_counts holds each organization's number of calls, kept by triggers in
-- the same transaction as the calls themselves, so the total of an
-- unfiltered list (the call log's first page) is read, not counted over
-- every call of the organization.
-- Inserting a call locks its organization's count until the transaction
-- ends; admission already serialises an organization's inserts with
-- LockOrg, taken before the insert, which keeps the lock order one way.
-- Statement-level triggers with transition tables count a multi-row insert
-- (or COPY) once. The functions pin their search_path to the schema they are
-- created in.

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
    org_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    calls  bigint NOT NULL
);

-- +goose StatementBegin
CREATE FUNCTION calls_count_insert() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO call_counts AS cc (org_id, calls)
    SELECT org_id, count(*) FROM new_calls GROUP BY org_id
    ON CONFLICT (org_id) DO UPDATE SET calls = cc.calls + EXCLUDED.calls;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION calls_count_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE call_counts cc SET calls = cc.calls - d.n
    FROM (SELECT org_id, count(*) AS n FROM old_calls GROUP BY org_id) d
    WHERE cc.org_id = d.org_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER calls_count_insert AFTER INSERT ON calls
    REFERENCING NEW TABLE AS new_calls FOR EACH STATEMENT EXECUTE FUNCTION calls_count_insert();
CREATE TRIGGER calls_count_delete AFTER DELETE ON calls
    REFERENCING OLD TABLE AS old_calls FOR EACH STATEMENT EXECUTE FUNCTION calls_count_delete();

-- +goose Down
DROP TABLE call_counts;
DROP TABLE calls;
DROP FUNCTION calls_count_delete();
DROP FUNCTION calls_count_insert();
