-- Test suites, their cases, runs and attempts, the SQLite twin of
-- postgres/00010_test_suites.sql.
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
-- in case order then attempt number. variables and transcript are JSON
-- text, never NULL; passed is NULL (no verdict), 0 or 1.
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
-- The statuses are written out the same way in the queries, so they match
-- the partial indexes.

-- +goose Up
CREATE TABLE test_suites (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (org_id, id)
) STRICT;
CREATE INDEX test_suites_org_created ON test_suites (org_id, created_at, id);
CREATE INDEX test_suites_org_agent ON test_suites (org_id, agent_id, created_at, id);

CREATE TABLE test_cases (
    id             TEXT PRIMARY KEY,
    org_id         TEXT NOT NULL,
    suite_id       TEXT NOT NULL,
    name           TEXT NOT NULL,
    script         TEXT NOT NULL,
    scoring_rubric TEXT NOT NULL,
    variables      TEXT NOT NULL,
    attempts       INTEGER NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    FOREIGN KEY (org_id, suite_id) REFERENCES test_suites (org_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX test_cases_suite_created ON test_cases (org_id, suite_id, created_at, id);

CREATE TABLE test_runs (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL,
    suite_id         TEXT NOT NULL,
    agent_id         TEXT NOT NULL,
    name             TEXT NOT NULL,
    mode             TEXT NOT NULL,
    status           TEXT NOT NULL,
    total_tests      INTEGER NOT NULL,
    passed_tests     INTEGER NOT NULL,
    failed_tests     INTEGER NOT NULL,
    error_message    TEXT,
    webhook_url      TEXT,
    webhook_status   TEXT,
    lease_owner      TEXT,
    lease_expires_at TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    started_at       TEXT,
    completed_at     TEXT,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, suite_id) REFERENCES test_suites (org_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX test_runs_suite_created ON test_runs (org_id, suite_id, created_at, id);
CREATE INDEX test_runs_running ON test_runs (created_at, id)
    WHERE status = 'running';
CREATE INDEX test_runs_webhooks ON test_runs (created_at, id)
    WHERE webhook_url IS NOT NULL AND webhook_status IS NULL AND status <> 'running';

CREATE TABLE test_attempts (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL,
    run_id          TEXT NOT NULL,
    position        INTEGER NOT NULL,
    test_case_id    TEXT NOT NULL,
    test_case_name  TEXT NOT NULL,
    attempt_number  INTEGER NOT NULL,
    script          TEXT NOT NULL,
    scoring_rubric  TEXT NOT NULL,
    variables       TEXT NOT NULL,
    status          TEXT NOT NULL,
    passed          INTEGER CHECK (passed IN (0, 1)),
    caller_agent_id TEXT,
    call_id         TEXT,
    inbound_call_id TEXT,
    reasoning       TEXT,
    error_message   TEXT,
    transcript      TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    started_at      TEXT,
    completed_at    TEXT,
    FOREIGN KEY (org_id, run_id) REFERENCES test_runs (org_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX test_attempts_run ON test_attempts (org_id, run_id, position, attempt_number, id);

-- +goose Down
DROP TABLE test_attempts;
DROP TABLE test_runs;
DROP TABLE test_cases;
DROP TABLE test_suites;
