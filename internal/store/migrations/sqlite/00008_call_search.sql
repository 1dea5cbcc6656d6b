-- The index behind a call list's q, the SQLite twin of
-- postgres/00008_call_search.sql.
--
-- q is a substring of a call's from number, to number, agent name or
-- summary, ASCII letters in any case (lower() on both sides, as SQLite's
-- LIKE and lower() fold only ASCII). calls_search is a contentless FTS5
-- table of those four columns, lower()ed, split into trigrams that keep
-- their case (case_sensitive 1: the text is lower-case already, and the
-- tokenizer's own folding would also fold non-ASCII letters, which LIKE
-- does not): a phrase of a query's trigrams matches exactly the rows that
-- hold it, so a query of three or more characters needs no LIKE to check
-- what the index found. Shorter ones have no trigram and are answered by
-- LIKE alone.
--
-- A call's row in the index is keyed by a number of its own, stable (the
-- calls rowid is not: VACUUM may renumber it): its organization's number
-- (call_search_orgs.n) in the high bits, above 40 bits that count the
-- organization's calls. So one organization's rows are one rowid range,
-- which FTS5 seeks to, and counting an organization's matches never reads
-- a call. call_search_keys maps a call to its key both ways.
--
-- Triggers keep it in step in the calls' own transaction: a new call, a
-- deleted one (cascades included), and an update that changes one of the
-- four columns (a summary set when the call ends); other updates (status,
-- lease) leave the index alone. The migration indexes the calls already
-- stored.

-- +goose Up
CREATE TABLE call_search_orgs (
    org_id TEXT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    n      INTEGER NOT NULL UNIQUE,
    next   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE call_search_keys (
    key     INTEGER PRIMARY KEY,
    call_id TEXT NOT NULL UNIQUE
) STRICT;

CREATE VIRTUAL TABLE calls_search USING fts5 (
    from_number,
    to_number,
    agent_name,
    summary,
    content = '',
    contentless_delete = 1,
    tokenize = 'trigram case_sensitive 1'
);

-- +goose StatementBegin
CREATE TRIGGER calls_search_insert AFTER INSERT ON calls
BEGIN
    INSERT INTO call_search_orgs (org_id, n, next)
    VALUES (NEW.org_id, (SELECT COALESCE(max(n), 0) + 1 FROM call_search_orgs), 0)
    ON CONFLICT (org_id) DO UPDATE SET next = next + 1;
    INSERT INTO call_search_keys (key, call_id)
    SELECT (n << 40) + next, NEW.id FROM call_search_orgs WHERE org_id = NEW.org_id;
    INSERT INTO calls_search (rowid, from_number, to_number, agent_name, summary)
    VALUES (last_insert_rowid(), lower(NEW.from_number), lower(NEW.to_number), lower(NEW.agent_name), lower(NEW.summary));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER calls_search_delete AFTER DELETE ON calls
BEGIN
    DELETE FROM calls_search WHERE rowid = (SELECT key FROM call_search_keys WHERE call_id = OLD.id);
    DELETE FROM call_search_keys WHERE call_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER calls_search_update AFTER UPDATE OF from_number, to_number, agent_name, summary ON calls
WHEN OLD.from_number IS NOT NEW.from_number OR OLD.to_number IS NOT NEW.to_number
    OR OLD.agent_name IS NOT NEW.agent_name OR OLD.summary IS NOT NEW.summary
BEGIN
    DELETE FROM calls_search WHERE rowid = (SELECT key FROM call_search_keys WHERE call_id = OLD.id);
    INSERT INTO calls_search (rowid, from_number, to_number, agent_name, summary)
    SELECT key, lower(NEW.from_number), lower(NEW.to_number), lower(NEW.agent_name), lower(NEW.summary)
    FROM call_search_keys WHERE call_id = NEW.id;
END;
-- +goose StatementEnd

-- The calls already stored, through the insert trigger's own steps.
INSERT INTO call_search_orgs (org_id, n, next)
SELECT org_id, row_number() OVER (ORDER BY org_id), count(*) - 1 FROM calls GROUP BY org_id;
INSERT INTO call_search_keys (key, call_id)
SELECT (o.n << 40) + row_number() OVER (PARTITION BY c.org_id ORDER BY c.created_at, c.id) - 1, c.id
FROM calls c JOIN call_search_orgs o ON o.org_id = c.org_id;
INSERT INTO calls_search (rowid, from_number, to_number, agent_name, summary)
SELECT k.key, lower(c.from_number), lower(c.to_number), lower(c.agent_name), lower(c.summary)
FROM call_search_keys k JOIN calls c ON c.id = k.call_id;

-- +goose Down
DROP TRIGGER calls_search_update;
DROP TRIGGER calls_search_delete;
DROP TRIGGER calls_search_insert;
DROP TABLE calls_search;
DROP TABLE call_search_keys;
DROP TABLE call_search_orgs;
