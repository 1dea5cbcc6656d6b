-- Outbound calls per second per trunk (carriers enforce a limit), shared by
-- every server on the database: trunk_pacing holds, per trunk, the
-- theoretical time of its next INVITE (a GCRA, as campaigns' next_dial_at),
-- read under the write lock and moved on before each INVITE is sent.
-- trunk is a key, not a reference: a stored trunk's id ("trunk:<id>") or
-- the default trunk of --sip-trunk-host ("default:<host>:<port>/<transport>"),
-- which has no row in sip_trunks. The epoch means never paced. A trunk's
-- row outlives the trunk: it is one short row, and a trunk id is never
-- reused. sip_trunks.calls_per_second is a trunk's own limit (NULL: the
-- server's --sip-trunk-cps; 0: unlimited).

-- +goose Up
CREATE TABLE trunk_pacing (
    trunk          TEXT PRIMARY KEY,
    next_invite_at TEXT NOT NULL
) STRICT;
ALTER TABLE sip_trunks ADD COLUMN calls_per_second REAL CHECK (calls_per_second >= 0);

-- +goose Down
ALTER TABLE sip_trunks DROP COLUMN calls_per_second;
DROP TABLE trunk_pacing;
