-- Messages, the SQLite twin of postgres/00004_messages.sql.
--
-- A message keeps agent_id, agent_name, messaging_connection_id and call_id
-- as they were when it was written: no foreign key, so deleting the agent
-- (or the connection) leaves the record as it was, as calls do. Deleting
-- the organization deletes its messages. Ids are opaque text ("msg_...");
-- generated_by_llm is 0 or 1.
--
-- Indexes:
--   messages_org_created       the default list, newest first (created_at,
--                              then id)
--   messages_org_agent_created agentId and folderId filters, and the newest
--                              message between an agent and a number
--   messages_org_conversation  a thread's history
--   messages_org_provider      status callbacks, which carry only the
--                              carrier's id
--   messages_org_direction     outbound messages since a time (rate limits)
--                              and the direction filter

-- +goose Up
CREATE TABLE messages (
    id                      TEXT PRIMARY KEY,
    org_id                  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id                TEXT,
    agent_name              TEXT,
    messaging_connection_id TEXT,
    call_id                 TEXT,
    conversation_id         TEXT NOT NULL,
    channel                 TEXT NOT NULL,
    direction               TEXT NOT NULL,
    from_number             TEXT NOT NULL,
    to_number               TEXT NOT NULL,
    body                    TEXT NOT NULL,
    status                  TEXT NOT NULL,
    provider_message_id     TEXT,
    generated_by_llm        INTEGER NOT NULL DEFAULT 0 CHECK (generated_by_llm IN (0, 1)),
    error_message           TEXT,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL
) STRICT;
CREATE INDEX messages_org_created ON messages (org_id, created_at DESC, id DESC);
CREATE INDEX messages_org_agent_created ON messages (org_id, agent_id, created_at);
CREATE INDEX messages_org_conversation ON messages (org_id, conversation_id, created_at);
CREATE INDEX messages_org_provider ON messages (org_id, provider_message_id);
CREATE INDEX messages_org_direction ON messages (org_id, direction, created_at);

-- +goose Down
DROP TABLE messages;
