package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
)

func scanCallDialog(r rowScanner) (model.CallDialog, error) {
	var d model.CallDialog
	var state string
	err := r.Scan(&d.OrgID, &d.CallID, &state, timeDest{&d.UpdatedAt})
	d.State = []byte(state)
	return d, err
}

// PutCallDialog stores d, replacing the call's previous dialog. The call
// must be the organization's: the row is inserted from it.
func (t *tx) PutCallDialog(ctx context.Context, d *model.CallDialog) error {
	if !uuids(d.OrgID, d.CallID) {
		return notFound("call %s", d.CallID)
	}
	d.UpdatedAt = stamp(model.Now())
	return t.change(ctx, "store the dialog of call "+d.CallID,
		`INSERT INTO call_dialogs (call_id, org_id, state, updated_at)
		SELECT c.id, c.org_id, ?, ? FROM calls c WHERE c.id = ? AND c.org_id = ?
		ON CONFLICT (call_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
		string(d.State), t.time(d.UpdatedAt), d.CallID, d.OrgID)
}

// GetCallDialog reads the call's dialog.
func (t *tx) GetCallDialog(ctx context.Context, orgID, callID string) (model.CallDialog, error) {
	if !uuids(orgID, callID) {
		return model.CallDialog{}, notFound("dialog of call %s", callID)
	}
	return get(ctx, t, scanCallDialog, "get the dialog of call "+callID,
		`SELECT org_id, call_id, state, updated_at FROM call_dialogs WHERE call_id = ? AND org_id = ?`, callID, orgID)
}

// DeleteCallDialog deletes the call's dialog, if it has one.
func (t *tx) DeleteCallDialog(ctx context.Context, orgID, callID string) error {
	if !uuids(orgID, callID) {
		return nil
	}
	if _, err := t.exec(ctx, `DELETE FROM call_dialogs WHERE call_id = ? AND org_id = ?`, callID, orgID); err != nil {
		return t.fail(err, "delete the dialog of call %s", callID)
	}
	return nil
}
