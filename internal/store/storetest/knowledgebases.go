package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func getKnowledgeBase(t *testing.T, b *bundle, orgID, id string) model.KnowledgeBase {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.KnowledgeBase, error) { return tx.GetKnowledgeBase(b.ctx, orgID, id) })
}

var knowledgeBaseTests = []test{
	{"CRUD", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.Description = ptr("Product docs") })
		wantEqual(t, kb, getKnowledgeBase(t, b, b.org.ID, kb.ID))
		wantEqual(t, 0, kb.SourceCount)

		kb.Name, kb.Description, kb.UpdatedAt = "Renamed", nil, at(8)
		b.update(t, func(tx store.Tx) error { return tx.UpdateKnowledgeBase(b.ctx, &kb) })
		wantEqual(t, kb, getKnowledgeBase(t, b, b.org.ID, kb.ID))

		b.update(t, func(tx store.Tx) error { return tx.DeleteKnowledgeBase(b.ctx, b.org.ID, kb.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.KnowledgeBase, error) {
			return tx.GetKnowledgeBase(b.ctx, b.org.ID, kb.ID)
		}), store.ErrNotFound)
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		kb := newKnowledgeBase(t, b, b.org.ID)
		for _, k := range []struct{ org, id string }{
			{b.other.ID, kb.ID}, {b.org.ID, model.NewID()}, {b.org.ID, "not-a-uuid"},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.KnowledgeBase, error) { return tx.GetKnowledgeBase(b.ctx, k.org, k.id) }), store.ErrNotFound)
			u := kb
			u.OrgID, u.ID, u.Name = k.org, k.id, "hijacked"
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateKnowledgeBase(b.ctx, &u) }), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteKnowledgeBase(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, kb, getKnowledgeBase(t, b, b.org.ID, kb.ID))
	}},
	{"GetKnowledgeBases", func(t *testing.T, b *bundle) {
		k1 := newKnowledgeBase(t, b, b.org.ID)
		k2 := newKnowledgeBase(t, b, b.org.ID)
		theirs := newKnowledgeBase(t, b, b.other.ID)
		got := read(t, b, func(tx store.Tx) ([]model.KnowledgeBase, error) {
			return tx.GetKnowledgeBases(b.ctx, b.org.ID, []string{k2.ID, theirs.ID, k1.ID, k2.ID})
		})
		wantEqual(t, []model.KnowledgeBase{k1, k2}, got, cmpopts.SortSlices(func(x, y model.KnowledgeBase) bool { return x.ID < y.ID }))
		empty := read(t, b, func(tx store.Tx) ([]model.KnowledgeBase, error) { return tx.GetKnowledgeBases(b.ctx, b.org.ID, nil) })
		if empty == nil || len(empty) != 0 {
			t.Fatalf("GetKnowledgeBases(nil) = %#v, want empty", empty)
		}
	}},
	{"List", func(t *testing.T, b *bundle) {
		var rows []created
		for _, sec := range []int{1, 2, 3, 3, 3, 0} {
			kb := newKnowledgeBase(t, b, b.org.ID, func(kb *model.KnowledgeBase) { kb.CreatedAt = at(sec) })
			rows = append(rows, created{kb.ID, kb.CreatedAt})
		}
		newKnowledgeBase(t, b, b.other.ID)
		checkPaging(t, oldestFirst(rows), func(p store.Page) ([]string, int) {
			var total int
			got := read(t, b, func(tx store.Tx) ([]model.KnowledgeBase, error) {
				rows, n, err := tx.ListKnowledgeBases(b.ctx, b.org.ID, p)
				total = n
				return rows, err
			})
			return ids(got, func(kb model.KnowledgeBase) string { return kb.ID }), total
		})
	}},
}
