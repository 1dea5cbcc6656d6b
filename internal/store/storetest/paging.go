package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/parley-voice/parley/internal/store"
)

// created is a row's id and creation time, what plain lists sort by.
type created struct {
	id string
	at time.Time
}

// oldestFirst is the ids of rows sorted by creation time then id.
func oldestFirst(rows []created) []string {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b created) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	return ids
}

func reversed(ids []string) []string {
	ids = slices.Clone(ids)
	slices.Reverse(ids)
	return ids
}

// checkPaging checks a list sorted by creation time then id: newest first by
// default, oldest first with Asc, pages that add up to the whole list with
// the total on each, and an empty page with the right total past the end.
// want is the ids oldest first; list returns one page's ids and the total.
func checkPaging(t *testing.T, want []string, list func(store.Page) ([]string, int)) {
	t.Helper()
	checkPagingFrom(t, store.Desc, want, list)
}

// checkPagingFrom is checkPaging for a list whose default direction is dir.
func checkPagingFrom(t *testing.T, dir string, want []string, list func(store.Page) ([]string, int)) {
	t.Helper()
	n := len(want)
	byDefault := reversed(want)
	if dir == store.Asc {
		byDefault = want
	}
	got, total := list(store.Page{Number: 1, Size: 100})
	wantEqual(t, byDefault, got, cmpopts.EquateEmpty())
	wantEqual(t, n, total)

	got, _ = list(store.Page{Number: 1, Size: 100, SortDir: store.Desc})
	wantEqual(t, reversed(want), got, cmpopts.EquateEmpty())

	got, _ = list(store.Page{Number: 1, Size: 100, SortDir: store.Asc})
	wantEqual(t, want, got, cmpopts.EquateEmpty())

	// A page without a size is the whole list.
	got, total = list(store.Page{SortDir: store.Asc})
	wantEqual(t, want, got, cmpopts.EquateEmpty())
	wantEqual(t, n, total)

	const size = 2
	var pages []string
	for number := 1; (number-1)*size < n; number++ {
		got, total := list(store.Page{Number: number, Size: size, SortDir: store.Asc})
		wantEqual(t, n, total)
		if len(got) != min(size, n-(number-1)*size) {
			t.Fatalf("page %d has %d rows, want %d", number, len(got), min(size, n-(number-1)*size))
		}
		pages = append(pages, got...)
	}
	wantEqual(t, want, pages, cmpopts.EquateEmpty())

	beyond := (n+size-1)/size + 1
	got, total = list(store.Page{Number: beyond, Size: size})
	if len(got) != 0 || total != n {
		t.Fatalf("page %d past the end: %d rows, total %d; want 0 rows, total %d", beyond, len(got), total, n)
	}
	if got == nil {
		t.Fatalf("page past the end is nil, want an empty slice")
	}
}

// ids is the ids of rows, via id.
func ids[T any](rows []T, id func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}
