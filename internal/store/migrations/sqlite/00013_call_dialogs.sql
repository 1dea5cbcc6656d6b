-- The SIP dialog of each answered live call (store.CallDialogs): what a
-- server needs to send BYE on a carrier leg whose own server died. Written
-- when the leg is answered, deleted when the call ends; deleting the call
-- deletes it.

-- +goose Up
CREATE TABLE call_dialogs (
    call_id    TEXT PRIMARY KEY REFERENCES calls (id) ON DELETE CASCADE,
    org_id     TEXT NOT NULL,
    state      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;

-- +goose Down
DROP TABLE call_dialogs;
