package sqlstore

import (
	"context"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

const suppressionColumns = "id, org_id, number, reason, created_at"

func scanSuppression(r rowScanner) (model.Suppression, error) {
	var s model.Suppression
	err := r.Scan(&s.ID, &s.OrgID, &s.Number, &s.Reason, timeDest{&s.CreatedAt})
	return s, err
}

// CreateSuppression inserts the entry; a number the organization
// suppresses already is ErrConflict (its unique key), an organization that
// does not exist ErrNotFound.
func (t *tx) CreateSuppression(ctx context.Context, s *model.Suppression) error {
	if s.ID == "" {
		s.ID = model.NewID()
	}
	s.CreatedAt = stamp(s.CreatedAt)
	if !uuids(s.ID, s.OrgID) {
		return notFound("create suppression %s: organization %s", s.ID, s.OrgID)
	}
	_, err := t.exec(ctx, `INSERT INTO suppressions (`+suppressionColumns+`) VALUES (?, ?, ?, ?, ?)`,
		s.ID, s.OrgID, s.Number, s.Reason, t.time(s.CreatedAt))
	if err != nil {
		return t.fail(err, "create suppression %s", s.ID)
	}
	return nil
}

func (t *tx) GetSuppression(ctx context.Context, orgID, id string) (model.Suppression, error) {
	if !uuids(orgID, id) {
		return model.Suppression{}, notFound("get suppression %s", id)
	}
	return get(ctx, t, scanSuppression, "get suppression "+id,
		`SELECT `+suppressionColumns+` FROM suppressions WHERE org_id = ? AND id = ?`, orgID, id)
}

func (t *tx) GetSuppressionByNumber(ctx context.Context, orgID, number string) (model.Suppression, error) {
	if !uuids(orgID) {
		return model.Suppression{}, notFound("get suppression of %s", number)
	}
	return get(ctx, t, scanSuppression, "get suppression of "+number,
		`SELECT `+suppressionColumns+` FROM suppressions WHERE org_id = ? AND number = ?`, orgID, number)
}

// ListSuppressions lists newest first unless f asks for oldest first; q
// is a substring of the number, its LIKE wildcards literal.
func (t *tx) ListSuppressions(ctx context.Context, orgID string, f store.SuppressionFilter) ([]model.Suppression, int, error) {
	if !uuids(orgID) {
		return []model.Suppression{}, 0, nil
	}
	where, args := "org_id = ?", []any{orgID}
	if f.Query != "" {
		where += ` AND number LIKE ? ESCAPE '\'`
		args = append(args, "%"+escapeLike(f.Query)+"%")
	}
	return list(ctx, t, listing{
		columns: suppressionColumns,
		from:    "suppressions",
		where:   where,
		args:    args,
		order:   newestFirst(f.Page),
		page:    f.Page,
	}, scanSuppression, "list suppressions")
}

func (t *tx) DeleteSuppression(ctx context.Context, orgID, id string) error {
	if !uuids(orgID, id) {
		return notFound("delete suppression %s", id)
	}
	return t.change(ctx, "delete suppression "+id, `DELETE FROM suppressions WHERE org_id = ? AND id = ?`, orgID, id)
}

// maxInNumbers is how many numbers one lookup of SuppressedNumbers asks
// about (a power of two, far under both engines' parameter limits).
const maxInNumbers = 2048

// SuppressedNumbers looks the distinct numbers up in the unique index
// (org_id, number), in IN lists of chunkSizes, so a 100,000-row upload
// takes about fifty lookups and only a dozen distinct query texts.
func (t *tx) SuppressedNumbers(ctx context.Context, orgID string, numbers []string) (map[string]bool, error) {
	out := map[string]bool{}
	if !uuids(orgID) || len(numbers) == 0 {
		return out, nil
	}
	seen := make(map[string]bool, len(numbers))
	distinct := make([]any, 0, len(numbers))
	for _, n := range numbers {
		if !seen[n] {
			seen[n] = true
			distinct = append(distinct, n)
		}
	}
	start := 0
	for _, size := range chunkSizes(len(distinct), maxInNumbers) {
		found, err := all(ctx, t, scanString, "look up suppressed numbers",
			`SELECT number FROM suppressions WHERE org_id = ? AND number IN (`+placeholders(size)+`)`,
			append([]any{orgID}, distinct[start:start+size]...)...)
		if err != nil {
			return nil, err
		}
		for _, n := range found {
			out[n] = true
		}
		start += size
	}
	return out, nil
}
