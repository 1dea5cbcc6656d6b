package storetest

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var callDialogTests = []test{
	{"PutGetReplaceDelete", func(t *testing.T, b *bundle) {
		c := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress))
		get := func(orgID string) (model.CallDialog, error) {
			return getDialog(b, func(tx store.Tx) (model.CallDialog, error) { return tx.GetCallDialog(b.ctx, orgID, c.ID) })
		}
		_, err := get(b.org.ID)
		wantIs(t, err, store.ErrNotFound)
		d := model.CallDialog{OrgID: b.org.ID, CallID: c.ID, State: []byte(`{"callId":"a@h","cseq":2}`)}
		b.update(t, func(tx store.Tx) error { return tx.PutCallDialog(b.ctx, &d) })
		got, err := get(b.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, d, got)
		// Another organization sees nothing, and cannot write it.
		_, err = get(b.other.ID)
		wantIs(t, err, store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.PutCallDialog(b.ctx, &model.CallDialog{OrgID: b.other.ID, CallID: c.ID, State: []byte(`{}`)})
		}), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.PutCallDialog(b.ctx, &model.CallDialog{OrgID: b.org.ID, CallID: model.NewID(), State: []byte(`{}`)})
		}), store.ErrNotFound)
		b.update(t, func(tx store.Tx) error { return tx.DeleteCallDialog(b.ctx, b.other.ID, c.ID) })
		if _, err := get(b.org.ID); err != nil {
			t.Fatalf("another organization's delete removed the dialog: %v", err)
		}
		// A second put replaces the first (the CSeq moved on).
		d.State = []byte(`{"callId":"a@h","cseq":3}`)
		b.update(t, func(tx store.Tx) error { return tx.PutCallDialog(b.ctx, &d) })
		got, err = get(b.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, d, got)
		b.update(t, func(tx store.Tx) error { return tx.DeleteCallDialog(b.ctx, b.org.ID, c.ID) })
		_, err = get(b.org.ID)
		wantIs(t, err, store.ErrNotFound)
		// Deleting what is not there is not an error.
		b.update(t, func(tx store.Tx) error { return tx.DeleteCallDialog(b.ctx, b.org.ID, c.ID) })
		b.update(t, func(tx store.Tx) error { return tx.DeleteCallDialog(b.ctx, "not-a-uuid", c.ID) })
	}},
	{"OnePerCall", func(t *testing.T, b *bundle) {
		c1 := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress))
		c2 := newCall(t, b, b.org.ID, model.NewID(), withStatus(model.CallInProgress))
		d1 := model.CallDialog{OrgID: b.org.ID, CallID: c1.ID, State: []byte(`{"n":1}`)}
		d2 := model.CallDialog{OrgID: b.org.ID, CallID: c2.ID, State: []byte(`{"n":2}`)}
		b.update(t, func(tx store.Tx) error {
			if err := tx.PutCallDialog(b.ctx, &d1); err != nil {
				return err
			}
			return tx.PutCallDialog(b.ctx, &d2)
		})
		b.update(t, func(tx store.Tx) error { return tx.DeleteCallDialog(b.ctx, b.org.ID, c1.ID) })
		got := read(t, b, func(tx store.Tx) (model.CallDialog, error) { return tx.GetCallDialog(b.ctx, b.org.ID, c2.ID) })
		wantEqual(t, d2, got)
	}},
}

// getDialog reads in a read transaction, returning the error rather than
// failing the test.
func getDialog(b *bundle, fn func(store.Tx) (model.CallDialog, error)) (model.CallDialog, error) {
	var d model.CallDialog
	err := b.st.View(b.ctx, func(tx store.Tx) (err error) {
		d, err = fn(tx)
		return err
	})
	return d, err
}
