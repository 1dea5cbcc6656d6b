package store

import "context"

// Read runs fn in a read-only transaction and returns its result.
func Read[T any](ctx context.Context, s Store, fn func(Tx) (T, error)) (T, error) {
	var out T
	err := s.View(ctx, func(tx Tx) (err error) {
		out, err = fn(tx)
		return err
	})
	return out, err
}

// ReadPage runs fn, a paged list query, in a read-only transaction and
// returns its rows and total.
func ReadPage[T any](ctx context.Context, s Store, fn func(Tx) ([]T, int, error)) ([]T, int, error) {
	var (
		out   []T
		total int
	)
	err := s.View(ctx, func(tx Tx) (err error) {
		out, total, err = fn(tx)
		return err
	})
	return out, total, err
}
