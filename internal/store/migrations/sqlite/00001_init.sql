-- Parley's first schema, the SQLite twin of postgres/00001_init.sql.
-- STRICT tables refuse a value of the wrong type instead of storing it.
-- Timestamps are TEXT in the fixed format 2006-01-02T15:04:05.000Z (UTC,
-- milliseconds), so they compare and sort as strings. JSON documents are TEXT,
-- booleans INTEGER 0/1, sealed secrets BLOB (NULL when absent).
--
-- Every reference between tenant-owned tables is a composite (org_id, id)
-- foreign key, so a row can never point into another organization. SQLite
-- cannot SET NULL only one column of a composite key (it would null org_id
-- too), so the nullable references have no delete action and a BEFORE DELETE
-- trigger on the parent clears them first; the key is then checked at the end
-- of the statement and holds.

-- +goose Up
CREATE TABLE organizations (
    id                TEXT PRIMARY KEY,
    name              TEXT NOT NULL UNIQUE,
    concurrency_limit INTEGER NOT NULL,
    webhook_secret    BLOB,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         BLOB NOT NULL UNIQUE,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT,
    last_used_at TEXT
) STRICT;
CREATE INDEX api_keys_org_created ON api_keys (org_id, created_at, id);

CREATE TABLE folders (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    color      TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (org_id, id)
) STRICT;
CREATE INDEX folders_org_created ON folders (org_id, created_at, id);

CREATE TABLE sip_trunks (
    id                    TEXT PRIMARY KEY,
    org_id                TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    friendly_name         TEXT NOT NULL,
    host                  TEXT,
    port                  INTEGER,
    transport             TEXT NOT NULL,
    username              TEXT,
    password              BLOB,
    inbound_username      TEXT,
    inbound_password      BLOB,
    inbound_allowed_cidrs TEXT NOT NULL,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    UNIQUE (org_id, id)
) STRICT;
CREATE INDEX sip_trunks_org_created ON sip_trunks (org_id, created_at, id);

CREATE TABLE messaging_connections (
    id                    TEXT PRIMARY KEY,
    org_id                TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                  TEXT,
    provider              TEXT NOT NULL,
    base_url              TEXT NOT NULL,
    account_sid           TEXT NOT NULL,
    auth_token            BLOB,
    from_number           TEXT,
    messaging_service_sid TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    UNIQUE (org_id, id)
) STRICT;
CREATE INDEX messaging_connections_org_created ON messaging_connections (org_id, created_at, id);

CREATE TABLE knowledge_bases (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (org_id, id)
) STRICT;
CREATE INDEX knowledge_bases_org_created ON knowledge_bases (org_id, created_at, id);

CREATE TABLE knowledge_base_sources (
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
CREATE INDEX knowledge_base_sources_kb ON knowledge_base_sources (org_id, knowledge_base_id, created_at, id);

CREATE TABLE agents (
    id                      TEXT PRIMARY KEY,
    org_id                  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                    TEXT NOT NULL,
    status                  TEXT NOT NULL,
    mode                    TEXT NOT NULL,
    folder_id               TEXT,
    sip_trunk_id            TEXT,
    messaging_connection_id TEXT,
    config                  TEXT NOT NULL,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, folder_id) REFERENCES folders (org_id, id),
    FOREIGN KEY (org_id, sip_trunk_id) REFERENCES sip_trunks (org_id, id),
    FOREIGN KEY (org_id, messaging_connection_id) REFERENCES messaging_connections (org_id, id)
) STRICT;
CREATE INDEX agents_org_created ON agents (org_id, created_at, id);
CREATE INDEX agents_org_updated ON agents (org_id, updated_at, id);
CREATE INDEX agents_org_name ON agents (org_id, lower(name), id);
CREATE INDEX agents_org_folder ON agents (org_id, folder_id);
CREATE INDEX agents_org_status ON agents (org_id, status);
CREATE INDEX agents_org_sip_trunk ON agents (org_id, sip_trunk_id);
CREATE INDEX agents_org_messaging_connection ON agents (org_id, messaging_connection_id);

CREATE TABLE agent_knowledge_bases (
    org_id            TEXT NOT NULL,
    agent_id          TEXT NOT NULL,
    knowledge_base_id TEXT NOT NULL,
    PRIMARY KEY (agent_id, knowledge_base_id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, knowledge_base_id) REFERENCES knowledge_bases (org_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
CREATE INDEX agent_knowledge_bases_org_agent ON agent_knowledge_bases (org_id, agent_id);
CREATE INDEX agent_knowledge_bases_kb ON agent_knowledge_bases (org_id, knowledge_base_id);

CREATE TABLE custom_tools (
    id                    TEXT PRIMARY KEY,
    org_id                TEXT NOT NULL,
    agent_id              TEXT NOT NULL,
    name                  TEXT NOT NULL,
    description           TEXT,
    webhook_url           TEXT NOT NULL,
    enabled               INTEGER NOT NULL,
    schema                TEXT NOT NULL,
    headers               TEXT NOT NULL,
    query_params          TEXT NOT NULL,
    send_raw_request_body INTEGER NOT NULL,
    timeout_seconds       INTEGER,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    UNIQUE (agent_id, name),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX custom_tools_org_agent ON custom_tools (org_id, agent_id, created_at, id);

CREATE TABLE phone_numbers (
    id           TEXT PRIMARY KEY,
    org_id       TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    e164         TEXT NOT NULL UNIQUE,
    sip_trunk_id TEXT,
    agent_id     TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    FOREIGN KEY (org_id, sip_trunk_id) REFERENCES sip_trunks (org_id, id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id)
) STRICT;
CREATE INDEX phone_numbers_org_created ON phone_numbers (org_id, created_at, id);
CREATE INDEX phone_numbers_org_agent ON phone_numbers (org_id, agent_id, e164);
CREATE INDEX phone_numbers_org_sip_trunk ON phone_numbers (org_id, sip_trunk_id);

-- The ON DELETE SET NULL of the nullable references (see the top of the file).
-- +goose StatementBegin
CREATE TRIGGER folders_unassign BEFORE DELETE ON folders
BEGIN
    UPDATE agents SET folder_id = NULL WHERE org_id = OLD.org_id AND folder_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sip_trunks_unassign BEFORE DELETE ON sip_trunks
BEGIN
    UPDATE agents SET sip_trunk_id = NULL WHERE org_id = OLD.org_id AND sip_trunk_id = OLD.id;
    UPDATE phone_numbers SET sip_trunk_id = NULL WHERE org_id = OLD.org_id AND sip_trunk_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messaging_connections_unassign BEFORE DELETE ON messaging_connections
BEGIN
    UPDATE agents SET messaging_connection_id = NULL
    WHERE org_id = OLD.org_id AND messaging_connection_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER agents_unassign BEFORE DELETE ON agents
BEGIN
    UPDATE phone_numbers SET agent_id = NULL WHERE org_id = OLD.org_id AND agent_id = OLD.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE phone_numbers;
DROP TABLE custom_tools;
DROP TABLE agent_knowledge_bases;
DROP TABLE agents;
DROP TABLE knowledge_base_sources;
DROP TABLE knowledge_bases;
DROP TABLE messaging_connections;
DROP TABLE sip_trunks;
DROP TABLE folders;
DROP TABLE api_keys;
DROP TABLE organizations;
