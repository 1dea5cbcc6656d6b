-- Test suites, their cases, runs and attempts, the PostgreSQL twin of
-- sqlite/00010_test_suites.sql.
--
-- A suite belongs to its organization; its cases and runs to the suite
-- (composite (org_id, suite_id) keys, so neither can point into another
-- organization) and a run's attempts to the run: deleting a suite deletes
-- its cases, runs and attempts. A suite's agent_id, and an attempt's
-- test_case_id, call_id, inbound_call_id and caller_agent_id, are recorded,
-- not referenced: the agent, the case, the calls and the ephemeral caller
-- agent may go, and the history stays as it was (as calls keep agent_id).
-- An attempt carries a copy of its case (name, script, rubric, variables)
-- for the same reason. position is the rank of the attempt's case in the
-- run (the order the cases were in when it started), so attempts read back
-- in case order then attempt number. variables and transcript are json,
-- never NULL, as the calls table keeps its documents (written and read
-- whole; json keeps \u0000, which jsonb refuses); passed is NULL when there
-- is no verdict.
--
-- Indexes:
--   test_suites_org_created     the suite list (created_at, then id)
--   test_suites_org_agent       the agentId filter of that list
--   test_cases_suite_created    a suite's cases (created_at, then id)
--   test_runs_suite_created     a suite's runs (created_at, then id), and
--                               counting its running ones
--   test_runs_running           running runs, oldest first: the runs a
--                               node drives and the leases it renews.
--                               Small: only running runs are in it
--   test_runs_webhooks          the test_run.completed webhook outbox
--   test_attempts_run           a run's attempts in order (and the cascade
--                               from the run)
-- The statuses are written out the same way in the queries, so the
-- planner matches them to the partial indexes.

-- +goose Up
CREATE TABLE test_suites (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id    uuid NOT NULL,
    name        text NOT NULL,
    description text,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX test_suites_org_created ON test_suites (org_id, created_at, id);
CREATE INDEX test_suites_org_agent ON test_suites (org_id, agent_id, created_at, id);

CREATE TABLE test_cases (
    id             uuid PRIMARY KEY,
    org_id         uuid NOT NULL,
    suite_id       uuid NOT NULL,
    name           text NOT NULL,
    script         text NOT NULL,
    scoring_rubric text NOT NULL,
    variables      json NOT NULL,
    attempts       integer NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    FOREIGN KEY (org_id, suite_id) REFERENCES test_suites (org_id, id) ON DELETE CASCADE
);
CREATE INDEX test_cases_suite_created ON test_cases (org_id, suite_id, created_at, id);

CREATE TABLE test_runs (
    id               uuid PRIMARY KEY,
    org_id           uuid NOT NULL,
    suite_id         uuid NOT NULL,
    agent_id         uuid NOT NULL,
    name             text NOT NULL,
    mode             text NOT NULL,
    status           text NOT NULL,
    total_tests      integer NOT NULL,
    passed_tests     integer NOT NULL,
    failed_tests     integer NOT NULL,
    error_message    text,
    webhook_url      text,
    webhook_status   text,
    lease_owner      text,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    started_at       timestamptz,
    completed_at     timestamptz,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, suite_id) REFERENCES test_suites (org_id, id) ON DELETE CASCADE
);
CREATE INDEX test_runs_suite_created ON test_runs (org_id, suite_id, created_at, id);
CREATE INDEX test_runs_running ON test_runs (created_at, id)
    WHERE status = 'running';
CREATE INDEX test_runs_webhooks ON test_runs (created_at, id)
    WHERE webhook_url IS NOT NULL AND webhook_status IS NULL AND status <> 'running';

CREATE TABLE test_attempts (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL,
    run_id          uuid NOT NULL,
    position        integer NOT NULL,
    test_case_id    uuid NOT NULL,
    test_case_name  text NOT NULL,
    attempt_number  integer NOT NULL,
    script          text NOT NULL,
    scoring_rubric  text NOT NULL,
    variables       json NOT NULL,
    status          text NOT NULL,
    passed          boolean,
    caller_agent_id uuid,
    call_id         uuid,
    inbound_call_id uuid,
    reasoning       text,
    error_message   text,
    transcript      json NOT NULL,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    started_at      timestamptz,
    completed_at    timestamptz,
    FOREIGN KEY (org_id, run_id) REFERENCES test_runs (org_id, id) ON DELETE CASCADE
);
CREATE INDEX test_attempts_run ON test_attempts (org_id, run_id, position, attempt_number, id);

-- +goose Down
DROP TABLE test_attempts;
DROP TABLE test_runs;
DROP TABLE test_cases;
DROP TABLE test_suites;
