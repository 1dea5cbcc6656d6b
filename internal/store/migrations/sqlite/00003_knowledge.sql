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
-- embedding is the vector as little-endian float32s, NULL without one. Unlike
-- on PostgreSQL it has an INTEGER PRIMARY KEY, id: the full-text index is an
-- external-content FTS5 table, which addresses its rows by rowid, and only an
-- INTEGER PRIMARY KEY keeps a rowid stable (VACUUM may renumber others).
-- Triggers keep the index in step with the table, including the deletes a
-- cascade makes. The index stems English words (porter over unicode61, which
-- folds case and strips diacritics), as PostgreSQL's english configuration
-- does; searches rank with bm25().

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
    content = 'knowledge_chunks',
    content_rowid = 'id',
    tokenize = 'porter unicode61'
);

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_fts_insert AFTER INSERT ON knowledge_chunks
BEGIN
    INSERT INTO knowledge_chunks_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_fts_delete AFTER DELETE ON knowledge_chunks
BEGIN
    INSERT INTO knowledge_chunks_fts (knowledge_chunks_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER knowledge_chunks_fts_update AFTER UPDATE OF id, text ON knowledge_chunks
BEGIN
    INSERT INTO knowledge_chunks_fts (knowledge_chunks_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
    INSERT INTO knowledge_chunks_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE knowledge_chunks_fts;
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
