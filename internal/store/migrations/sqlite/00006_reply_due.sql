-- An inbound message the agent still owes a reply carries reply_due_at:
-- until then the server that took it is answering; after it, any server
-- may take it over (the one that took it stopped before it was done).

-- +goose Up
ALTER TABLE messages ADD COLUMN reply_due_at TEXT;
CREATE INDEX messages_reply_due ON messages (reply_due_at) WHERE reply_due_at IS NOT NULL;

-- +goose Down
DROP INDEX messages_reply_due;
ALTER TABLE messages DROP COLUMN reply_due_at;
