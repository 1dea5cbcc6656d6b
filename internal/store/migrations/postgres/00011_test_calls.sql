-- Test runs place real calls: a hidden simulated-caller agent dials the
-- agent under test over the loopback trunk. Simulated callers are agents
-- no API query sees (agents.simulated_caller). The caller leg of a test
-- attempt reserves a second line for its far end from its admission until
-- that far end's inbound leg is admitted onto it (calls.reserves_line), so
-- the attempt never ends BUSY on its own inbound leg and never overruns the
-- limit; the inbound leg names its caller (calls.loopback_caller_id).
--
-- The live count of 00009 becomes weighted: a live call counts
-- 1 + reserves_line. The triggers keep it exact whichever of status and
-- reserves_line changes, and announce on parley_line_free whenever a call's
-- weight drops while its organization has queued calls. The PostgreSQL twin
-- of sqlite/00011_test_calls.sql.

-- +goose Up
ALTER TABLE agents ADD COLUMN simulated_caller boolean NOT NULL DEFAULT false;

ALTER TABLE calls ADD COLUMN reserves_line boolean NOT NULL DEFAULT false;
ALTER TABLE calls ADD COLUMN loopback_caller_id uuid;
CREATE INDEX calls_org_loopback_caller ON calls (org_id, loopback_caller_id)
    WHERE loopback_caller_id IS NOT NULL;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_count_insert() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO call_counts AS cc (org_id, calls, live)
    SELECT org_id, count(*),
           coalesce(sum(1 + reserves_line::int) FILTER (WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')), 0)
    FROM new_calls GROUP BY org_id
    ON CONFLICT (org_id) DO UPDATE SET calls = cc.calls + EXCLUDED.calls, live = cc.live + EXCLUDED.live;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_count_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE call_counts cc SET calls = cc.calls - d.n, live = cc.live - d.live
    FROM (SELECT org_id, count(*) AS n,
                 coalesce(sum(1 + reserves_line::int) FILTER (WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')), 0) AS live
          FROM old_calls GROUP BY org_id) d
    WHERE cc.org_id = d.org_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- calls_live_weight is the number of lines a call holds.
-- +goose StatementBegin
CREATE FUNCTION calls_live_weight(status text, reserves_line boolean) RETURNS int
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN status IN ('INITIATED', 'RINGING', 'IN_PROGRESS') THEN 1 + reserves_line::int ELSE 0 END
$$;
-- +goose StatementEnd

-- calls_live_change runs only for an update that changes the lines a call
-- holds (its WHEN says so): ringing and answering a call write no count.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_live_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    delta int := calls_live_weight(NEW.status, NEW.reserves_line) - calls_live_weight(OLD.status, OLD.reserves_line);
BEGIN
    UPDATE call_counts SET live = live + delta WHERE org_id = NEW.org_id;
    IF delta < 0 AND EXISTS (SELECT 1 FROM calls WHERE org_id = NEW.org_id AND status = 'QUEUED') THEN
        PERFORM pg_notify('parley_line_free', NEW.org_id::text);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER calls_live_change ON calls;
CREATE TRIGGER calls_live_change AFTER UPDATE OF status, reserves_line ON calls FOR EACH ROW
    WHEN (calls_live_weight(OLD.status, OLD.reserves_line) <> calls_live_weight(NEW.status, NEW.reserves_line))
    EXECUTE FUNCTION calls_live_change();

-- +goose Down
DROP TRIGGER calls_live_change ON calls;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_live_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS') THEN
        UPDATE call_counts SET live = live + 1 WHERE org_id = NEW.org_id;
    ELSE
        UPDATE call_counts SET live = live - 1 WHERE org_id = NEW.org_id;
        IF EXISTS (SELECT 1 FROM calls WHERE org_id = NEW.org_id AND status = 'QUEUED') THEN
            PERFORM pg_notify('parley_line_free', NEW.org_id::text);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER calls_live_change AFTER UPDATE OF status ON calls FOR EACH ROW
    WHEN ((OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) IS DISTINCT FROM
          (NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')))
    EXECUTE FUNCTION calls_live_change();

DROP FUNCTION calls_live_weight(text, boolean);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_count_insert() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO call_counts AS cc (org_id, calls, live)
    SELECT org_id, count(*), count(*) FILTER (WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'))
    FROM new_calls GROUP BY org_id
    ON CONFLICT (org_id) DO UPDATE SET calls = cc.calls + EXCLUDED.calls, live = cc.live + EXCLUDED.live;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_count_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE call_counts cc SET calls = cc.calls - d.n, live = cc.live - d.live
    FROM (SELECT org_id, count(*) AS n,
                 count(*) FILTER (WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) AS live
          FROM old_calls GROUP BY org_id) d
    WHERE cc.org_id = d.org_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- The down step ends every reservation: the live count goes back to one
-- line per live call.
UPDATE call_counts cc SET live = l.n
FROM (SELECT o.id AS org_id, count(c.id) AS n FROM organizations o
      LEFT JOIN calls c ON c.org_id = o.id AND c.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')
      GROUP BY o.id) l
WHERE cc.org_id = l.org_id;

DROP INDEX calls_org_loopback_caller;
ALTER TABLE calls DROP COLUMN loopback_caller_id;
ALTER TABLE calls DROP COLUMN reserves_line;
ALTER TABLE agents DROP COLUMN simulated_caller;
