package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

var transactionTests = []test{
	{"RollbackOnError", func(t *testing.T, b *bundle) {
		boom := errors.New("boom")
		var f model.Folder
		err := b.st.Update(b.ctx, func(tx store.Tx) error {
			f = model.Folder{OrgID: b.org.ID, Name: "doomed"}
			if err := tx.CreateFolder(b.ctx, &f); err != nil {
				return err
			}
			return boom
		})
		wantIs(t, err, boom)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Folder, error) { return tx.GetFolder(b.ctx, b.org.ID, f.ID) }), store.ErrNotFound)
	}},
	{"RollbackOnPanic", func(t *testing.T, b *bundle) {
		var f model.Folder
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want the panic to reach the caller", r)
				}
			}()
			_ = b.st.Update(b.ctx, func(tx store.Tx) error {
				f = model.Folder{OrgID: b.org.ID, Name: "doomed"}
				if err := tx.CreateFolder(b.ctx, &f); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		wantIs(t, readErr(b, func(tx store.Tx) (model.Folder, error) { return tx.GetFolder(b.ctx, b.org.ID, f.ID) }), store.ErrNotFound)
		// The store still works: the connection went back clean.
		newFolder(t, b, b.org.ID)
	}},
	{"CommitSeesOwnWrites", func(t *testing.T, b *bundle) {
		b.update(t, func(tx store.Tx) error {
			f := model.Folder{OrgID: b.org.ID, Name: "seen"}
			if err := tx.CreateFolder(b.ctx, &f); err != nil {
				return err
			}
			got, err := tx.GetFolder(b.ctx, b.org.ID, f.ID)
			if err != nil || got.Name != "seen" {
				return fmt.Errorf("read own write: %v, %v", got, err)
			}
			return nil
		})
	}},
	{"ViewCannotWrite", func(t *testing.T, b *bundle) {
		o := model.Organization{Name: "sneaky"}
		if err := b.view(func(tx store.Tx) error { return tx.CreateOrg(b.ctx, &o) }); err == nil {
			t.Fatal("View allowed a write")
		}
		wantIs(t, readErr(b, func(tx store.Tx) (model.Organization, error) { return tx.GetOrgByName(b.ctx, "sneaky") }), store.ErrNotFound)
	}},
	{"ConcurrentUpdates", func(t *testing.T, b *bundle) {
		// Writers queue; none fails with "database is locked".
		const writers = 20
		var wg sync.WaitGroup
		errs := make(chan error, writers*2)
		for i := range writers {
			wg.Go(func() {
				errs <- b.st.Update(b.ctx, func(tx store.Tx) error {
					f := model.Folder{OrgID: b.org.ID, Name: fmt.Sprintf("folder %d", i)}
					if err := tx.CreateFolder(b.ctx, &f); err != nil {
						return err
					}
					_, _, err := tx.ListFolders(b.ctx, b.org.ID, store.Page{Number: 1, Size: 5})
					return err
				})
			})
			wg.Go(func() {
				errs <- b.view(func(tx store.Tx) error {
					_, _, err := tx.ListFolders(b.ctx, b.org.ID, store.Page{Number: 1, Size: 5})
					return err
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent transaction: %v", err)
			}
		}
		_, total := func() ([]model.Folder, int) {
			var total int
			rows := read(t, b, func(tx store.Tx) ([]model.Folder, error) {
				rows, n, err := tx.ListFolders(b.ctx, b.org.ID, store.Page{Number: 1, Size: 1})
				total = n
				return rows, err
			})
			return rows, total
		}()
		wantEqual(t, writers, total)
	}},
	{"EngineAndPing", func(t *testing.T, b *bundle) {
		if e := b.st.Engine(); e != "sqlite" && e != "postgres" {
			t.Fatalf("engine = %q", e)
		}
		if err := b.st.Ping(b.ctx); err != nil {
			t.Fatal(err)
		}
	}},
}
