-- Parley's first schema. Every tenant-owned table carries org_id, and every
-- reference between them is a composite (org_id, id) foreign key, so a row can
-- never point into another organization. ON DELETE SET NULL (column) needs
-- PostgreSQL 15 or later: it clears the reference but keeps org_id.
-- Names sort with COLLATE "C" (byte order) so pages come out in the same order
-- as on SQLite, whatever the database's locale.

-- +goose Up
CREATE TABLE organizations (
    id                uuid PRIMARY KEY,
    name              text NOT NULL UNIQUE,
    concurrency_limit integer NOT NULL,
    webhook_secret    bytea,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name         text NOT NULL,
    prefix       text NOT NULL,
    hash         bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX api_keys_org_created ON api_keys (org_id, created_at, id);

CREATE TABLE folders (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name       text NOT NULL,
    color      text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX folders_org_created ON folders (org_id, created_at, id);

CREATE TABLE sip_trunks (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    friendly_name         text NOT NULL,
    host                  text,
    port                  integer,
    transport             text NOT NULL,
    username              text,
    password              bytea,
    inbound_username      text,
    inbound_password      bytea,
    inbound_allowed_cidrs jsonb NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX sip_trunks_org_created ON sip_trunks (org_id, created_at, id);

-- Messaging connection ids are opaque strings ("mc_..."), not UUIDs.
CREATE TABLE messaging_connections (
    id                    text PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                  text,
    provider              text NOT NULL,
    base_url              text NOT NULL,
    account_sid           text NOT NULL,
    auth_token            bytea,
    from_number           text,
    messaging_service_sid text,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX messaging_connections_org_created ON messaging_connections (org_id, created_at, id);

CREATE TABLE knowledge_bases (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name        text NOT NULL,
    description text,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (org_id, id)
);
CREATE INDEX knowledge_bases_org_created ON knowledge_bases (org_id, created_at, id);

CREATE TABLE knowledge_base_sources (
    id                uuid PRIMARY KEY,
    org_id            uuid NOT NULL,
    knowledge_base_id uuid NOT NULL,
    display_name      text NOT NULL,
    content           text NOT NULL DEFAULT '',
    original_url      text,
    mime_type         text,
    file_size         bigint,
    error_message     text,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    FOREIGN KEY (org_id, knowledge_base_id) REFERENCES knowledge_bases (org_id, id) ON DELETE CASCADE
);
CREATE INDEX knowledge_base_sources_kb ON knowledge_base_sources (org_id, knowledge_base_id, created_at, id);

CREATE TABLE agents (
    id                      uuid PRIMARY KEY,
    org_id                  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                    text NOT NULL,
    status                  text NOT NULL,
    mode                    text NOT NULL,
    folder_id               uuid,
    sip_trunk_id            uuid,
    messaging_connection_id text,
    config                  jsonb NOT NULL,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    UNIQUE (org_id, id),
    FOREIGN KEY (org_id, folder_id) REFERENCES folders (org_id, id) ON DELETE SET NULL (folder_id),
    FOREIGN KEY (org_id, sip_trunk_id) REFERENCES sip_trunks (org_id, id) ON DELETE SET NULL (sip_trunk_id),
    FOREIGN KEY (org_id, messaging_connection_id) REFERENCES messaging_connections (org_id, id)
        ON DELETE SET NULL (messaging_connection_id)
);
CREATE INDEX agents_org_created ON agents (org_id, created_at, id);
CREATE INDEX agents_org_updated ON agents (org_id, updated_at, id);
CREATE INDEX agents_org_name ON agents (org_id, lower(name) COLLATE "C", id);
CREATE INDEX agents_org_folder ON agents (org_id, folder_id);
CREATE INDEX agents_org_status ON agents (org_id, status);
CREATE INDEX agents_org_sip_trunk ON agents (org_id, sip_trunk_id);
CREATE INDEX agents_org_messaging_connection ON agents (org_id, messaging_connection_id);

CREATE TABLE agent_knowledge_bases (
    org_id            uuid NOT NULL,
    agent_id          uuid NOT NULL,
    knowledge_base_id uuid NOT NULL,
    PRIMARY KEY (agent_id, knowledge_base_id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE,
    FOREIGN KEY (org_id, knowledge_base_id) REFERENCES knowledge_bases (org_id, id) ON DELETE CASCADE
);
CREATE INDEX agent_knowledge_bases_kb ON agent_knowledge_bases (org_id, knowledge_base_id);

CREATE TABLE custom_tools (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL,
    agent_id              uuid NOT NULL,
    name                  text NOT NULL,
    description           text,
    webhook_url           text NOT NULL,
    enabled               boolean NOT NULL,
    schema                jsonb NOT NULL,
    headers               jsonb NOT NULL,
    query_params          jsonb NOT NULL,
    send_raw_request_body boolean NOT NULL,
    timeout_seconds       integer,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (agent_id, name),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE CASCADE
);
CREATE INDEX custom_tools_org_agent ON custom_tools (org_id, agent_id, created_at, id);

-- An E.164 number exists once in the whole deployment: inbound routing looks
-- it up without knowing the organization.
CREATE TABLE phone_numbers (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    e164         text NOT NULL UNIQUE,
    sip_trunk_id uuid,
    agent_id     uuid,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    FOREIGN KEY (org_id, sip_trunk_id) REFERENCES sip_trunks (org_id, id) ON DELETE SET NULL (sip_trunk_id),
    FOREIGN KEY (org_id, agent_id) REFERENCES agents (org_id, id) ON DELETE SET NULL (agent_id)
);
CREATE INDEX phone_numbers_org_created ON phone_numbers (org_id, created_at, id);
CREATE INDEX phone_numbers_org_agent ON phone_numbers (org_id, agent_id, e164);
CREATE INDEX phone_numbers_org_sip_trunk ON phone_numbers (org_id, sip_trunk_id);

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
