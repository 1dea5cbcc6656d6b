-- The index behind a call list's q, the PostgreSQL twin of
-- sqlite/00008_call_search.sql.
--
-- q is a case-insensitive substring of a call's from number, to number,
-- agent name or summary, which the list writes as lower(column) LIKE
-- lower(pattern) for each. calls_search is a pg_trgm GIN index of those four
-- expressions, so a pattern of three or more characters is looked up by its
-- trigrams and only the calls that hold all of them are read (and checked
-- by the LIKE itself: the index is lossy); a shorter one has no trigram and
-- the planner reads the calls instead.
--
-- pg_trgm is created unless some schema already has it, in public when
-- there is one (so that it outlives a schema of Parley's own, dropped with
-- its tables: the database's extension is shared), or else in the schema
-- the tables are in. Several schemas migrated at once in one database may
-- race to create it: the loser finds it there. The index names the
-- operator class in whichever schema holds it, so the search_path need not.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    ext_schema text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        BEGIN
            IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'public') THEN
                CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
            ELSE
                EXECUTE format('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA %I', current_schema());
            END IF;
        EXCEPTION WHEN unique_violation OR duplicate_object OR duplicate_function THEN
            NULL; -- created meanwhile by another migration
        END;
    END IF;
    SELECT n.nspname INTO ext_schema
    FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX calls_search ON calls USING gin (
        lower(from_number) %1$I.gin_trgm_ops, lower(to_number) %1$I.gin_trgm_ops,
        lower(agent_name) %1$I.gin_trgm_ops, lower(summary) %1$I.gin_trgm_ops)', ext_schema);
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP INDEX calls_search;
