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
-- reserves_line changes. The SQLite twin of postgres/00011_test_calls.sql.

-- +goose Up
ALTER TABLE agents ADD COLUMN simulated_caller INTEGER NOT NULL DEFAULT 0 CHECK (simulated_caller IN (0, 1));

ALTER TABLE calls ADD COLUMN reserves_line INTEGER NOT NULL DEFAULT 0 CHECK (reserves_line IN (0, 1));
ALTER TABLE calls ADD COLUMN loopback_caller_id TEXT;
CREATE INDEX calls_org_loopback_caller ON calls (org_id, loopback_caller_id)
    WHERE loopback_caller_id IS NOT NULL;

DROP TRIGGER calls_count_insert;
DROP TRIGGER calls_count_delete;
DROP TRIGGER calls_live_change;

-- +goose StatementBegin
CREATE TRIGGER calls_count_insert AFTER INSERT ON calls
BEGIN
    INSERT INTO call_counts (org_id, calls, live)
        VALUES (NEW.org_id, 1, (NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) * (1 + NEW.reserves_line))
        ON CONFLICT (org_id) DO UPDATE SET calls = calls + 1, live = live + excluded.live;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER calls_count_delete AFTER DELETE ON calls
BEGIN
    UPDATE call_counts SET calls = calls - 1,
        live = live - (OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) * (1 + OLD.reserves_line)
        WHERE org_id = OLD.org_id;
END;
-- +goose StatementEnd

-- Only an update that changes the lines a call holds writes the count:
-- ringing and answering a call do not.
-- +goose StatementBegin
CREATE TRIGGER calls_live_change AFTER UPDATE OF status, reserves_line ON calls
WHEN (OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) * (1 + OLD.reserves_line)
  <> (NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) * (1 + NEW.reserves_line)
BEGIN
    UPDATE call_counts
        SET live = live + (NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) * (1 + NEW.reserves_line)
                        - (OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) * (1 + OLD.reserves_line)
        WHERE org_id = NEW.org_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER calls_live_change;
DROP TRIGGER calls_count_insert;
DROP TRIGGER calls_count_delete;

-- +goose StatementBegin
CREATE TRIGGER calls_count_insert AFTER INSERT ON calls
BEGIN
    INSERT INTO call_counts (org_id, calls, live)
        VALUES (NEW.org_id, 1, NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'))
        ON CONFLICT (org_id) DO UPDATE SET calls = calls + 1, live = live + excluded.live;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER calls_count_delete AFTER DELETE ON calls
BEGIN
    UPDATE call_counts SET calls = calls - 1,
        live = live - (OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'))
        WHERE org_id = OLD.org_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER calls_live_change AFTER UPDATE OF status ON calls
WHEN (OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) <> (NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'))
BEGIN
    UPDATE call_counts
        SET live = live + CASE WHEN NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS') THEN 1 ELSE -1 END
        WHERE org_id = NEW.org_id;
END;
-- +goose StatementEnd

-- The down step ends every reservation: the live count goes back to one
-- line per live call.
UPDATE call_counts SET live = (SELECT count(*) FROM calls c
    WHERE c.org_id = call_counts.org_id AND c.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'));

DROP INDEX calls_org_loopback_caller;
ALTER TABLE calls DROP COLUMN loopback_caller_id;
ALTER TABLE calls DROP COLUMN reserves_line;
ALTER TABLE agents DROP COLUMN simulated_caller;
