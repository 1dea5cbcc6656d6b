package web

import "github.com/parley-voice/parley/internal/store"

// allPages collects every page of a list. A form's choices must hold every
// reference a resource may already have: a choice missing past the first
// page would be drawn unselected, and saving the form would clear it.
func allPages[T any](list func(store.Page) ([]T, int, error)) ([]T, error) {
	var out []T
	for p := (store.Page{Number: 1, Size: maxPageSize, SortDir: store.Asc}); ; p.Number++ {
		rows, total, err := list(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) == 0 || len(out) >= total {
			return out, nil
		}
	}
}
