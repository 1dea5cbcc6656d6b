-- Each organization's number of live calls (INITIATED, RINGING,
-- IN_PROGRESS), kept in call_counts by triggers in the same transaction as
-- every status change, so admission reads one row instead of counting the
-- calls that hold a line. Triggers keep it exact whatever path starts or
-- ends a call (admission, dispatch, the worker, a cancel, the reaper after
-- a crash). A call's line freeing while the organization has queued calls
-- is announced on the channel parley_line_free (payload: the organization
-- id), so every server's dispatcher hears it, not only the one that ended
-- the call. The PostgreSQL twin of sqlite/00009_live_calls.sql.

-- +goose Up
ALTER TABLE call_counts ADD COLUMN live bigint NOT NULL DEFAULT 0 CHECK (live >= 0);

UPDATE call_counts cc SET live = l.n
FROM (SELECT org_id, count(*) AS n FROM calls
      WHERE status IN ('INITIATED', 'RINGING', 'IN_PROGRESS') GROUP BY org_id) l
WHERE cc.org_id = l.org_id;

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

-- calls_live_change runs only for an update that moves a call into or out
-- of the live statuses (its WHEN says so): ringing and answering a call
-- write no count.
-- +goose StatementBegin
CREATE FUNCTION calls_live_change() RETURNS trigger LANGUAGE plpgsql
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

-- +goose Down
DROP TRIGGER calls_live_change ON calls;
DROP FUNCTION calls_live_change();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION calls_count_insert() RETURNS trigger LANGUAGE plpgsql
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
CREATE OR REPLACE FUNCTION calls_count_delete() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE call_counts cc SET calls = cc.calls - d.n
    FROM (SELECT org_id, count(*) AS n FROM old_calls GROUP BY org_id) d
    WHERE cc.org_id = d.org_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

ALTER TABLE call_counts DROP COLUMN live;
