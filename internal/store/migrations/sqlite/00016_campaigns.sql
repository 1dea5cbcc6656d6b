-- Campaigns (store.Campaigns): calling lists, their recipients, and the
-- organization's do-not-call list. The SQLite twin of
-- postgres/00016_campaigns.sql.
--
-- campaigns: the settings no query filters on are one JSON document
-- (config); has_webhook says whether it holds a webhookUrl, so the
-- dispatcher's outbox of campaign_completed deliveries is read through an
-- index rather than by decoding documents. The count_* columns count the
-- recipients per status; the store writes them in the transaction of every
-- recipient insert or status change, never a trigger (a trigger per row
-- would write the campaign's row once per recipient of a 100,000-row
-- upload). agent_id has no foreign key: deleting an agent must stay
-- possible, and a campaign whose agent is gone keeps its recipients and
-- history (the dispatcher fails its dials).
--
-- campaign_recipients: next_attempt_at is never NULL. "At once" is stored
-- as the epoch (1970-01-01T00:00:00.000Z), which the store reads back as
-- nil: the due query is then one range of campaign_recipients_due, in the
-- order it wants (longest due first, then upload order), with no special
-- case for NULL in either engine. call_ids is a JSON array of the
-- attempts' calls, oldest first; last_call_id is its last element, a
-- column so that the live recipients join their calls by key.
--
-- Indexes:
--   campaigns_org_created / _status_created / _agent_created
--                                   the campaign list and its filters
--   campaigns_active                running campaigns, paused ones with
--                                   calls live (their outcomes), finished ones
--                                   owing campaign_completed (the
--                                   dispatcher's scan, across organizations)
--   primary key (org_id, campaign_id, id)
--                                   a recipient, the recipient list in
--                                   upload order (ids are UUIDv7), and the
--                                   cascade from campaigns
--   campaign_recipients_number      one recipient per number and campaign
--   campaign_recipients_due         pending recipients by due time then id:
--                                   DueCampaignRecipients is a range scan
--   campaign_recipients_status_id   the recipient list filtered by status,
--                                   and the live (in_progress) recipients
--   suppressions (org_id, number)   unique: one entry per number
--   suppressions_org_created        the suppression list
--   calls_org_campaign_created      GET /calls?campaignId=
-- Every recipient index leads with (org_id, campaign_id), the equalities
-- every recipient query has, so no planner prefers one index over another
-- for matching more of them (SQLite plans without statistics); there are
-- no more of them than the queries need, as a 100,000-row upload writes
-- each of them 100,000 times.
--
-- organizations.inbound_reserve_percent is the share of the concurrency
-- limit that campaigns leave to inbound and API calls.

-- +goose Up
ALTER TABLE organizations ADD COLUMN inbound_reserve_percent INTEGER NOT NULL DEFAULT 20
    CHECK (inbound_reserve_percent BETWEEN 0 AND 100);

ALTER TABLE calls ADD COLUMN campaign_id TEXT;
CREATE INDEX calls_org_campaign_created ON calls (org_id, campaign_id, created_at, id)
    WHERE campaign_id IS NOT NULL;

CREATE TABLE campaigns (
    id                 TEXT PRIMARY KEY,
    org_id             TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    agent_id           TEXT NOT NULL,
    name               TEXT NOT NULL,
    description        TEXT,
    status             TEXT NOT NULL,
    start_at           TEXT,
    end_at             TEXT,
    config             TEXT NOT NULL,
    has_webhook        INTEGER NOT NULL CHECK (has_webhook IN (0, 1)),
    count_total        INTEGER NOT NULL DEFAULT 0 CHECK (count_total >= 0),
    count_pending      INTEGER NOT NULL DEFAULT 0 CHECK (count_pending >= 0),
    count_in_progress  INTEGER NOT NULL DEFAULT 0 CHECK (count_in_progress >= 0),
    count_completed    INTEGER NOT NULL DEFAULT 0 CHECK (count_completed >= 0),
    count_failed       INTEGER NOT NULL DEFAULT 0 CHECK (count_failed >= 0),
    count_suppressed   INTEGER NOT NULL DEFAULT 0 CHECK (count_suppressed >= 0),
    count_expired      INTEGER NOT NULL DEFAULT 0 CHECK (count_expired >= 0),
    count_canceled     INTEGER NOT NULL DEFAULT 0 CHECK (count_canceled >= 0),
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    started_at         TEXT,
    completed_at       TEXT,
    next_dial_at       TEXT NOT NULL,
    dispatch_owner     TEXT,
    dispatch_until     TEXT,
    webhook_status     TEXT,
    UNIQUE (org_id, id)
) STRICT;
CREATE INDEX campaigns_org_created ON campaigns (org_id, created_at, id);
CREATE INDEX campaigns_org_status_created ON campaigns (org_id, status, created_at, id);
CREATE INDEX campaigns_org_agent_created ON campaigns (org_id, agent_id, created_at, id);
CREATE INDEX campaigns_active ON campaigns (created_at, id)
    WHERE status = 'running'
       OR (status = 'paused' AND count_in_progress > 0)
       OR (status IN ('completed', 'canceled') AND webhook_status IS NULL AND has_webhook);

CREATE TABLE campaign_recipients (
    id                TEXT NOT NULL,
    org_id            TEXT NOT NULL,
    campaign_id       TEXT NOT NULL,
    to_number         TEXT NOT NULL,
    variables         TEXT NOT NULL,
    timezone          TEXT,
    status            TEXT NOT NULL,
    attempts          INTEGER NOT NULL CHECK (attempts >= 0),
    last_hangup_cause TEXT,
    next_attempt_at   TEXT NOT NULL,
    last_call_id      TEXT,
    call_ids          TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    PRIMARY KEY (org_id, campaign_id, id),
    FOREIGN KEY (org_id, campaign_id) REFERENCES campaigns (org_id, id) ON DELETE CASCADE
) STRICT;
CREATE UNIQUE INDEX campaign_recipients_number ON campaign_recipients (org_id, campaign_id, to_number);
CREATE INDEX campaign_recipients_due ON campaign_recipients (org_id, campaign_id, next_attempt_at, id)
    WHERE status = 'pending';
CREATE INDEX campaign_recipients_status_id ON campaign_recipients (org_id, campaign_id, status, id);

CREATE TABLE suppressions (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    number     TEXT NOT NULL,
    reason     TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (org_id, number)
) STRICT;
CREATE INDEX suppressions_org_created ON suppressions (org_id, created_at, id);

-- +goose Down
DROP TABLE suppressions;
DROP TABLE campaign_recipients;
DROP TABLE campaigns;
DROP INDEX calls_org_campaign_created;
ALTER TABLE calls DROP COLUMN campaign_id;
ALTER TABLE organizations DROP COLUMN inbound_reserve_percent;
