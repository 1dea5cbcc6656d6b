package sqlstore

import (
	"context"
	"time"
)

// LockTrunkPace creates trunk's row at the epoch when it has none, then
// reads it, held (FOR UPDATE on PostgreSQL; SQLite's one writer).
func (t *tx) LockTrunkPace(ctx context.Context, trunk string) (time.Time, error) {
	if _, err := t.exec(ctx, `INSERT INTO trunk_pacing (trunk, next_invite_at) VALUES (?, ?) ON CONFLICT (trunk) DO NOTHING`,
		trunk, t.d.Time(time.Unix(0, 0).UTC())); err != nil {
		return time.Time{}, t.fail(err, "pace trunk %s", trunk)
	}
	var next time.Time
	if err := t.queryRow(ctx, `SELECT next_invite_at FROM trunk_pacing WHERE trunk = ?`+t.forUpdate(false), trunk).Scan(timeDest{&next}); err != nil {
		return time.Time{}, t.fail(err, "pace trunk %s", trunk)
	}
	return next, nil
}

// SetTrunkPace writes next_invite_at alone.
func (t *tx) SetTrunkPace(ctx context.Context, trunk string, next time.Time) error {
	return t.change(ctx, "pace trunk "+trunk, `UPDATE trunk_pacing SET next_invite_at = ? WHERE trunk = ?`, t.d.Time(exact(next)), trunk)
}
