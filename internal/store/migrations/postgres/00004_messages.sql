-- Messages, the PostgreSQL twin of sqlite/00004_messages.sql.
--
-- A message keeps agent_id, agent_name, messaging_connection_id and call_id
-- as they were when it was written: no foreign key, so deleting the agent
-- (or the connection) leaves the record as it was, as calls do. Deleting
-- the organization deletes its messages. Ids are opaque text ("msg_..."),
-- COLLATE "C" so they sort by bytes, as on SQLite, and the indexes serve the
-- lists' tie-break; direction and status likewise.
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
    id                      text COLLATE "C" PRIMARY KEY,
    org_id                  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id                uuid,
    agent_name              text,
    messaging_connection_id text,
    call_id                 uuid,
    conversation_id         text NOT NULL,
    channel                 text NOT NULL,
    direction               text COLLATE "C" NOT NULL,
    from_number             text NOT NULL,
    to_number               text NOT NULL,
    body                    text NOT NULL,
    status                  text COLLATE "C" NOT NULL,
    provider_message_id     text,
    generated_by_llm        boolean NOT NULL DEFAULT false,
    error_message           text,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL
);
CREATE INDEX messages_org_created ON messages (org_id, created_at DESC, id DESC);
CREATE INDEX messages_org_agent_created ON messages (org_id, agent_id, created_at);
CREATE INDEX messages_org_conversation ON messages (org_id, conversation_id, created_at);
CREATE INDEX messages_org_provider ON messages (org_id, provider_message_id);
CREATE INDEX messages_org_direction ON messages (org_id, direction, created_at);

-- +goose Down
DROP TABLE messages;
