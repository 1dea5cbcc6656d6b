-- Knowledge sources and their chunks, the SQLite twin of
-- postgres/00003_knowledge.sql.
--
-- knowledge_base_sources gains indexed_at (NULL until the source has been
-- split into chunks); mime_type and file_size become NOT NULL, as the model
-- holds them. SQLite cannot alter a column, so the table is rebuilt (nothing
-- references it yet, so dropping the old one cascades nowhere). Its new
-- UNIQUE (org_id, knowledge_base_id, id) is what a chunk's foreign key
-- points at: a chunk can only belong to a source of its own base and
-- organization, and goes with it.
--
-- knowledge_chunks holds each source's chunks, (source_id, seq) unique;
-- embedding is the vector as little-endian float32s, NULL without one.
--
-- knowledge_chunks_fts is the full-text index of the chunks, kept by
-- triggers in step with the table, cascaded deletes included. It stems
-- English words (porter over unicode61, which folds case and strips
-- diacritics), as PostgreSQL's english configuration does; searches rank
-- with bm25(). It is contentless (it keeps no copy of the text), with rows
-- deleted by rowid, so knowledge_chunks has an INTEGER PRIMARY KEY, id, which
-- PostgreSQL's twin lacks: only that keeps a rowid stable (VACUUM may
-- renumber others). Beside the text it indexes one token naming the chunk's
-- knowledge base ('k', the id's hex digits, '0': no stemmer suffix), so a
-- search ANDs the base into the match and FTS5 ranks only that base's
-- chunks, not every organization's; and it keeps source_id and seq
-- (UNINDEXED, in its own small table), so that the best chunks, ties broken
-- by source then seq, are picked without reading knowledge_chunks.

-- +goose Up
CREATE TABLE knowledge_base_sources_new (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL,
    knowledge_base_id TEXT NOT NULL,
    display_name      TEXT NOT NULL,
    content           TEXT NOT NULL DEFAULT '',
    original_url      TEXT,
    mime_type         TEXT NOT NULL DEFAULT 'text/plain',
    file_size         INTEGER NOT NULL DEFAULT 0,
    error_message     TEXT,
    indexed_at        TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    UNIQUE (org_id, knowledge_base_id, id),
    FOREIGN KEY (org_id, knowledge_base_id) REFERENCES knowledge_bases (org_id, id) ON DELETE CASCADE
) STRICT;
INSERT INTO knowledge_base_sources_new (id, org_id, knowledge_base_id, display_name, content, original_url,
    mime_type, file_size, error_message, created_at, updated_at)
SELECT id, org_id, knowledge_base_id, display_name, content, original_url,
    COALESCE(mime_type, 'text/plain'), COALESCE(file_size, length(CAST(content AS BLOB))), error_message,
    created_at, updated_at
FROM knowledge_base_sources;
DROP TABLE knowledge_base_sources;
ALTER TABLE knowledge_base_sources_new RENAME TO knowledge_base_sources;
CREATE INDEX knowledge_base_sources_kb ON knowledge_base_sources (org_id, knowledge_base_id, created_at, id);

CREATE TABLE knowledge_chunks (
    id                INTEGER PRIMARY KEY,
    org_id            TEXT NOT NULL,
    knowledge_base_id TEXT NOT NULL,
    source_id         TEXT NOT NULL,
    seq               INTEGER NOT NULL,
    text              TEXT NOT NULL,
    embedding         BLOB,
    UNIQUE (source_id, seq),
    FOREIGN KEY (org_id, knowledge_base_id, source_id)
        REFERENCES knowledge_base_sources (org_id, knowledge_base_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX knowledge_chunks_kb ON knowledge_chunks (org_id, knowledge_base_id);

CREATE VIRTUAL TABLE knowledge_chunks_fts USING fts5 (
    text,
    kb,
    source_id UNINDEXED,
    seq UNINDEXED,
    content = '',
    contentless_delete = 1,
    contentless_unindexed = 1,
    tokenize = 'porter unicode61'
);

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_fts_insert AFTER INSERT ON knowledge_chunks
BEGIN
    INSERT INTO knowledge_chunks_fts (rowid, text, kb, source_id, seq)
    VALUES (NEW.id, NEW.text, 'k' || replace(NEW.knowledge_base_id, '-', '') || '0', NEW.source_id, NEW.seq);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_fts_delete AFTER DELETE ON knowledge_chunks
BEGIN
    DELETE FROM knowledge_chunks_fts WHERE rowid = OLD.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_fts_update AFTER UPDATE ON knowledge_chunks
BEGIN
    DELETE FROM knowledge_chunks_fts WHERE rowid = OLD.id;
    INSERT INTO knowledge_chunks_fts (rowid, text, kb, source_id, seq)
    VALUES (NEW.id, NEW.text, 'k' || replace(NEW.knowledge_base_id, '-', '') || '0', NEW.source_id, NEW.seq);
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE knowledge_chunks_fts;
-- FTS5 leaves a contentless_unindexed table's content table behind.
DROP TABLE IF EXISTS knowledge_chunks_fts_content;
DROP TABLE knowledge_chunks;

CREATE TABLE knowledge_base_sources_old (
    id                TEXT PRIMARY KEY,
    org_id            TEXT NOT NULL,
    knowledge_base_id TEXT NOT NULL,
    display_name      TEXT NOT NULL,
    content           TEXT NOT NULL DEFAULT '',
    original_url      TEXT,
    mime_type         TEXT,
    file_size         INTEGER,
    error_message     TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    FOREIGN KEY (org_id, knowledge_base_id) REFERENCES knowledge_bases (org_id, id) ON DELETE CASCADE
) STRICT;
INSERT INTO knowledge_base_sources_old (id, org_id, knowledge_base_id, display_name, content, original_url,
    mime_type, file_size, error_message, created_at, updated_at)
SELECT id, org_id, knowledge_base_id, display_name, content, original_url,
    mime_type, file_size, error_message, created_at, updated_at
FROM knowledge_base_sources;
DROP TABLE knowledge_base_sources;
ALTER TABLE knowledge_base_sources_old RENAME TO knowledge_base_sources;
CREATE INDEX knowledge_base_sources_kb ON knowledge_base_sources (org_id, knowledge_base_id, created_at, id);
