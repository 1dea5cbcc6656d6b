package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var folderTests = []test{
	{"CRUD", func(t *testing.T, b *bundle) {
		f := newFolder(t, b, b.org.ID, func(f *model.Folder) { f.Color = ptr("#ff8800") })
		get := func() (model.Folder, error) {
			var got model.Folder
			err := b.view(func(tx store.Tx) (err error) { got, err = tx.GetFolder(b.ctx, b.org.ID, f.ID); return })
			return got, err
		}
		got, err := get()
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, f, got)

		f.Name, f.Color, f.UpdatedAt = "Renamed", nil, at(7)
		b.update(t, func(tx store.Tx) error { return tx.UpdateFolder(b.ctx, &f) })
		got, _ = get()
		wantEqual(t, f, got)

		b.update(t, func(tx store.Tx) error { return tx.DeleteFolder(b.ctx, b.org.ID, f.ID) })
		_, err = get()
		wantIs(t, err, store.ErrNotFound)
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		f := newFolder(t, b, b.org.ID)
		for _, k := range []struct{ org, id string }{
			{b.other.ID, f.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Folder, error) { return tx.GetFolder(b.ctx, k.org, k.id) }), store.ErrNotFound)
			u := f
			u.OrgID, u.ID, u.Name = k.org, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateFolder(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteFolder(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		got := read(t, b, func(tx store.Tx) (model.Folder, error) { return tx.GetFolder(b.ctx, b.org.ID, f.ID) })
		wantEqual(t, f, got)
	}},
	{"GetFolders", func(t *testing.T, b *bundle) {
		f1 := newFolder(t, b, b.org.ID)
		f2 := newFolder(t, b, b.org.ID)
		theirs := newFolder(t, b, b.other.ID)
		// More ids than one IN list takes, mostly unknown.
		ask := []string{f2.ID, theirs.ID, "not-a-uuid", f1.ID, f1.ID}
		for range 1200 {
			ask = append(ask, model.NewID())
		}
		got := read(t, b, func(tx store.Tx) ([]model.Folder, error) { return tx.GetFolders(b.ctx, b.org.ID, ask) })
		wantEqual(t, []model.Folder{f1, f2}, got, cmpopts.SortSlices(func(x, y model.Folder) bool { return x.ID < y.ID }))
		empty := read(t, b, func(tx store.Tx) ([]model.Folder, error) { return tx.GetFolders(b.ctx, b.org.ID, nil) })
		if empty == nil || len(empty) != 0 {
			t.Fatalf("GetFolders(nil) = %#v, want empty", empty)
		}
	}},
	{"List", func(t *testing.T, b *bundle) {
		var rows []created
		for _, sec := range []int{3, 1, 2, 2, 5} { // a tie at 2: broken by id
			f := newFolder(t, b, b.org.ID, func(f *model.Folder) { f.CreatedAt = at(sec) })
			rows = append(rows, created{f.ID, f.CreatedAt})
		}
		newFolder(t, b, b.other.ID)
		checkPaging(t, oldestFirst(rows), func(p store.Page) ([]string, int) {
			var total int
			got := read(t, b, func(tx store.Tx) ([]model.Folder, error) {
				rows, n, err := tx.ListFolders(b.ctx, b.org.ID, p)
				total = n
				return rows, err
			})
			return ids(got, func(f model.Folder) string { return f.ID }), total
		})
	}},
}
