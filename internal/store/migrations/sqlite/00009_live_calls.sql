-- Each organization's number of live calls (INITIATED, RINGING,
-- IN_PROGRESS), kept in call_counts by triggers in the same transaction as
-- every status change, so admission reads one row instead of counting the
-- calls that hold a line. Triggers keep it exact whatever path starts or
-- ends a call (admission, dispatch, the worker, a cancel, the reaper after
-- a crash). The SQLite twin of postgres/00009_live_calls.sql (SQLite has
-- one server, whose dispatcher is woken in process: no notification).

-- +goose Up
ALTER TABLE call_counts ADD COLUMN live INTEGER NOT NULL DEFAULT 0 CHECK (live >= 0);

UPDATE call_counts SET live = (SELECT count(*) FROM calls c
    WHERE c.org_id = call_counts.org_id AND c.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'));

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

-- Only an update that moves a call into or out of the live statuses
-- writes the count: ringing and answering a call do not.
-- +goose StatementBegin
CREATE TRIGGER calls_live_change AFTER UPDATE OF status ON calls
WHEN (OLD.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS')) <> (NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS'))
BEGIN
    UPDATE call_counts
        SET live = live + CASE WHEN NEW.status IN ('INITIATED', 'RINGING', 'IN_PROGRESS') THEN 1 ELSE -1 END
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

ALTER TABLE call_counts DROP COLUMN live;
