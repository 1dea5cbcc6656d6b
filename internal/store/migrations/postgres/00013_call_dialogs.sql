-- The SIP dialog of each answered live call (store.CallDialogs): what a
-- server needs to send BYE on a carrier leg whose own server died. Written
-- when the leg is answered, deleted when the call ends; deleting the call
-- deletes it.

-- +goose Up
CREATE TABLE call_dialogs (
    call_id    uuid PRIMARY KEY REFERENCES calls (id) ON DELETE CASCADE,
    org_id     uuid NOT NULL,
    state      text NOT NULL,
    updated_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE call_dialogs;
