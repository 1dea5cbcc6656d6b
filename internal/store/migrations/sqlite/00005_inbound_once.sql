-- A carrier may deliver one inbound message twice (a retry racing the
-- first): it is recorded once. Outbound ids are the carrier's answer and
-- are not constrained.

-- +goose Up
CREATE UNIQUE INDEX messages_inbound_provider ON messages (org_id, provider_message_id) WHERE direction = 'INBOUND';

-- +goose Down
DROP INDEX messages_inbound_provider;
