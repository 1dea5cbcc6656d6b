package storetest

import (
	"fmt"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func newSuppression(t *testing.T, b *bundle, orgID, number string, mods ...func(*model.Suppression)) model.Suppression {
	t.Helper()
	s := model.Suppression{OrgID: orgID, Number: number, CreatedAt: at(0)}
	for _, m := range mods {
		m(&s)
	}
	b.update(t, func(tx store.Tx) error { return tx.CreateSuppression(b.ctx, &s) })
	return s
}

func listSuppressionNumbers(t *testing.T, b *bundle, orgID string, f store.SuppressionFilter) ([]string, int) {
	t.Helper()
	numbers := []string{}
	var total int
	err := b.view(func(tx store.Tx) error {
		ss, n, err := tx.ListSuppressions(b.ctx, orgID, f)
		for _, s := range ss {
			numbers = append(numbers, s.Number)
		}
		total = n
		return err
	})
	if err != nil {
		t.Fatalf("list suppressions: %v", err)
	}
	return numbers, total
}

var suppressionTests = []test{
	{"CreateGetDelete", func(t *testing.T, b *bundle) {
		s := newSuppression(t, b, b.org.ID, "+15550003001", func(s *model.Suppression) { s.Reason = ptr("asked on the phone") })
		bare := model.Suppression{OrgID: b.org.ID, Number: "+15550003002"}
		b.update(t, func(tx store.Tx) error { return tx.CreateSuppression(b.ctx, &bare) })
		if !model.IsUUID(bare.ID) || bare.CreatedAt.IsZero() {
			t.Fatalf("id and time not filled in: %+v", bare)
		}
		for _, want := range []model.Suppression{s, bare} {
			got := read(t, b, func(tx store.Tx) (model.Suppression, error) { return tx.GetSuppression(b.ctx, b.org.ID, want.ID) })
			wantEqual(t, want, got)
			got = read(t, b, func(tx store.Tx) (model.Suppression, error) {
				return tx.GetSuppressionByNumber(b.ctx, b.org.ID, want.Number)
			})
			wantEqual(t, want, got)
		}
		b.update(t, func(tx store.Tx) error { return tx.DeleteSuppression(b.ctx, b.org.ID, s.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.Suppression, error) { return tx.GetSuppression(b.ctx, b.org.ID, s.ID) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Suppression, error) {
			return tx.GetSuppressionByNumber(b.ctx, b.org.ID, s.Number)
		}), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteSuppression(b.ctx, b.org.ID, s.ID) }), store.ErrNotFound)
		newSuppression(t, b, b.org.ID, s.Number) // deleted: the number may be suppressed again
	}},
	{"Conflict", func(t *testing.T, b *bundle) {
		s := newSuppression(t, b, b.org.ID, "+15550003001")
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.CreateSuppression(b.ctx, &model.Suppression{OrgID: b.org.ID, Number: s.Number})
		}), store.ErrConflict)
		theirs := newSuppression(t, b, b.other.ID, s.Number) // each organization has its own list
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.CreateSuppression(b.ctx, &model.Suppression{OrgID: model.NewID(), Number: s.Number})
		}), store.ErrNotFound)
		got := read(t, b, func(tx store.Tx) (model.Suppression, error) {
			return tx.GetSuppressionByNumber(b.ctx, b.other.ID, s.Number)
		})
		wantEqual(t, theirs, got)
	}},
	{"TenantIsolation", func(t *testing.T, b *bundle) {
		s := newSuppression(t, b, b.org.ID, "+15550003001")
		wantIs(t, readErr(b, func(tx store.Tx) (model.Suppression, error) { return tx.GetSuppression(b.ctx, b.other.ID, s.ID) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Suppression, error) {
			return tx.GetSuppressionByNumber(b.ctx, b.other.ID, s.Number)
		}), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Suppression, error) { return tx.GetSuppression(b.ctx, b.org.ID, "x") }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteSuppression(b.ctx, b.other.ID, s.ID) }), store.ErrNotFound)
		if got, total := listSuppressionNumbers(t, b, b.other.ID, store.SuppressionFilter{}); len(got) != 0 || total != 0 {
			t.Fatalf("the other organization lists %v (%d)", got, total)
		}
		found := read(t, b, func(tx store.Tx) (map[string]bool, error) {
			return tx.SuppressedNumbers(b.ctx, b.other.ID, []string{s.Number})
		})
		wantEqual(t, map[string]bool{}, found)
	}},
	{"List", func(t *testing.T, b *bundle) {
		numbers := []string{"+15550003001", "+1555%0003", "+1555_00034", "+44207183875", "+15550003%01"}
		for i, n := range numbers {
			newSuppression(t, b, b.org.ID, n, func(s *model.Suppression) { s.CreatedAt = at(i) })
		}
		newSuppression(t, b, b.other.ID, "+15550003009")
		got, total := listSuppressionNumbers(t, b, b.org.ID, store.SuppressionFilter{})
		wantEqual(t, []string{numbers[4], numbers[3], numbers[2], numbers[1], numbers[0]}, got)
		wantEqual(t, 5, total)
		got, _ = listSuppressionNumbers(t, b, b.org.ID, store.SuppressionFilter{Page: store.Page{SortDir: store.Asc, Number: 2, Size: 2}})
		wantEqual(t, []string{numbers[2], numbers[3]}, got)
		got, total = listSuppressionNumbers(t, b, b.org.ID, store.SuppressionFilter{Query: "0003"})
		wantEqual(t, []string{numbers[4], numbers[2], numbers[1], numbers[0]}, got)
		wantEqual(t, 4, total)
		got, total = listSuppressionNumbers(t, b, b.org.ID, store.SuppressionFilter{Query: "%0"}) // % is a character, not a wildcard
		wantEqual(t, []string{numbers[4], numbers[1]}, got)
		wantEqual(t, 2, total)
		got, _ = listSuppressionNumbers(t, b, b.org.ID, store.SuppressionFilter{Query: "5_0"})
		wantEqual(t, []string{numbers[2]}, got)
		got, _ = listSuppressionNumbers(t, b, b.org.ID, store.SuppressionFilter{Query: "+44"})
		wantEqual(t, []string{numbers[3]}, got)
	}},
	{"SuppressedNumbers", func(t *testing.T, b *bundle) {
		// More numbers than one lookup asks about, so the answer comes from
		// several: suppressed ones spread over all of them.
		const n = 41000
		asked := make([]string, 0, n+2)
		want := map[string]bool{}
		var mine []model.Suppression
		for i := range n {
			number := fmt.Sprintf("+1556%07d", i)
			asked = append(asked, number)
			if i%997 == 0 {
				want[number] = true
				mine = append(mine, model.Suppression{OrgID: b.org.ID, Number: number, CreatedAt: at(i)})
			}
		}
		asked = append(asked, asked[0], asked[1]) // asked twice: answered once
		theirs := fmt.Sprintf("+1556%07d", 1)
		b.update(t, func(tx store.Tx) error {
			for i := range mine {
				if err := tx.CreateSuppression(b.ctx, &mine[i]); err != nil {
					return err
				}
			}
			return tx.CreateSuppression(b.ctx, &model.Suppression{OrgID: b.other.ID, Number: theirs})
		})
		got := read(t, b, func(tx store.Tx) (map[string]bool, error) { return tx.SuppressedNumbers(b.ctx, b.org.ID, asked) })
		wantEqual(t, want, got)
		if len(want) < 40 {
			t.Fatalf("only %d numbers suppressed: the test should spread them over every lookup", len(want))
		}
		none := read(t, b, func(tx store.Tx) (map[string]bool, error) { return tx.SuppressedNumbers(b.ctx, b.org.ID, nil) })
		wantEqual(t, map[string]bool{}, none)
	}},
}
