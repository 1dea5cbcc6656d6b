package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// direction is the SQL sort direction for dir; anything but Asc is Desc.
func direction(dir string) string {
	if strings.EqualFold(dir, store.Asc) {
		return "ASC"
	}
	return "DESC"
}

// newestFirst orders a list by creation time then id, in p's direction.
func newestFirst(p store.Page) string {
	dir := direction(p.SortDir)
	return fmt.Sprintf("created_at %s, id %s", dir, dir)
}

// listing is one page of a list plus how many rows the list has in all.
type listing struct {
	columns string // the select list
	from    string // table, with its alias if columns use one
	where   string // condition, ? placeholders
	args    []any
	order   string // ORDER BY clause, ties broken so pages never overlap
	page    store.Page
	// total, when set, is the query that reads the total (with totalArgs,
	// or args when nil) instead of counting the rows of from and where.
	total     string
	totalArgs []any
	// counted, when set, is the total, already counted.
	counted *int
}

// list runs l: the total count ignores paging; a page past the end is empty.
func list[T any](ctx context.Context, t *tx, l listing, scan func(rowScanner) (T, error), what string) ([]T, int, error) {
	total, err := l.count(ctx, t, what)
	if err != nil {
		return nil, 0, err
	}
	query := "SELECT " + l.columns + " FROM " + l.from + " WHERE " + l.where + " ORDER BY " + l.order
	args := l.args
	if l.page.Size > 0 {
		offset := 0
		if l.page.Number > 1 {
			offset = l.page.Offset()
		}
		if offset >= total {
			return []T{}, total, nil
		}
		query += " LIMIT ? OFFSET ?"
		args = append(args[:len(args):len(args)], l.page.Size, offset)
	}
	rows, err := all(ctx, t, scan, what, query, args...)
	if err != nil {
		return nil, 0, err
	}
	return rows, total, nil
}

// count is how many rows l has in all, pages aside.
func (l listing) count(ctx context.Context, t *tx, what string) (int, error) {
	if l.counted != nil {
		return *l.counted, nil
	}
	count := l.total
	if count == "" {
		count = "SELECT count(*) FROM " + l.from + " WHERE " + l.where
	}
	countArgs := l.totalArgs
	if countArgs == nil {
		countArgs = l.args
	}
	return t.count(ctx, what, count, countArgs...)
}

// batchSize bounds an IN list: far below both engines' parameter limits,
// far above what one API page asks for.
const batchSize = 500

// uuidBatches calls fn with the distinct UUIDs among ids, at most batchSize at
// a time, and the placeholders for them. Ids that are not UUIDs name no row
// (every such row is created with one), and PostgreSQL's uuid columns would
// fail the whole query on them, so they are dropped.
func uuidBatches(ids []string, fn func(batch []any, marks string) error) error {
	seen := make(map[string]bool, len(ids))
	batch := make([]any, 0, min(len(ids), batchSize))
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := fn(batch, placeholders(len(batch)))
		batch = batch[:0]
		return err
	}
	for _, id := range ids {
		if seen[id] || !model.IsUUID(id) {
			continue
		}
		seen[id] = true
		batch = append(batch, id)
		if len(batch) == batchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// placeholders is "?, ?, ..." for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// uuids reports whether every id is a UUID; when one is not, a lookup by it
// cannot match, and is answered without asking the database.
func uuids(ids ...string) bool {
	for _, id := range ids {
		if !model.IsUUID(id) {
			return false
		}
	}
	return true
}

// escapeLike makes s match literally inside a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// uuidArgs is the UUIDs among ids as query arguments, in one list (for a
// NOT IN, which cannot be split into batches).
func uuidArgs(ids []string) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		if model.IsUUID(id) {
			out = append(out, id)
		}
	}
	return out
}
