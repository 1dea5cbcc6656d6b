package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// RetainingOrgs reads the organizations with a retention period set.
func (t *tx) RetainingOrgs(ctx context.Context) ([]model.Organization, error) {
	return all(ctx, t, scanOrg, "list organizations with a retention period",
		`SELECT `+orgColumns+` FROM organizations
		WHERE recording_retention_days IS NOT NULL OR transcript_retention_days IS NOT NULL ORDER BY id`)
}

// cursorStart is where a kind's cursor starts: before every call.
var cursorStart = struct {
	at time.Time
	id string
}{time.Unix(0, 0).UTC(), "00000000-0000-0000-0000-000000000000"}

// EndedCallsAfter reads the cursor, then one range of calls_org_ended_asc
// after it: (ended_at IS NULL) is fixed false, then (ended_at, id) runs
// from the cursor to before. The ORDER BY is the engine's way of reading
// that index in order without a sort: SQLite sees the fixed first column
// only without it, PostgreSQL only with it.
func (t *tx) EndedCallsAfter(ctx context.Context, orgID, kind string, before time.Time, n int) ([]store.EndedCall, error) {
	if !uuids(orgID) || n <= 0 {
		return []store.EndedCall{}, nil
	}
	after, afterID := cursorStart.at, cursorStart.id
	err := t.queryRow(ctx, `SELECT ended_at, call_id FROM retention_cursors WHERE org_id = ? AND kind = ?`, orgID, kind).
		Scan(timeDest{&after}, &afterID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, t.fail(err, "read the %s retention cursor of organization %s", kind, orgID)
	}
	scan := func(r rowScanner) (store.EndedCall, error) {
		var c store.EndedCall
		err := r.Scan(&c.ID, timeDest{&c.EndedAt}, &c.HasRecording)
		return c, err
	}
	return all(ctx, t, scan, "list ended calls of organization "+orgID, EndedCallsQuery(t.d.Engine()),
		orgID, t.time(before), t.d.Time(after), afterID, n)
}

// EndedCallsQuery is EndedCallsAfter's query on engine, with ? for the
// organization, the cutoff, the cursor's time and id, and the limit; the
// engines' plan tests check it reads calls_org_ended_asc in order.
func EndedCallsQuery(engine string) string {
	order := "c.ended_at, c.id"
	if engine == "postgres" {
		order = "(c.ended_at IS NULL), " + order
	}
	return `SELECT c.id, c.ended_at, c.recording_url IS NOT NULL FROM calls c
		WHERE c.org_id = ? AND (c.ended_at IS NULL) = FALSE AND c.ended_at < ? AND (c.ended_at, c.id) > (?, ?)
		ORDER BY ` + order + ` LIMIT ?`
}

// ClearRecordingURLs nulls the calls' recording_url, which no index holds.
func (t *tx) ClearRecordingURLs(ctx context.Context, orgID string, ids []string) (int, error) {
	return t.retentionWrite(ctx, orgID, ids, "clear recording urls",
		`UPDATE calls SET recording_url = NULL WHERE org_id = ? AND id IN (%s) AND recording_url IS NOT NULL`)
}

// EmptyTranscripts writes [] over the calls' transcripts that are not
// already empty (compared as text: PostgreSQL's json has no equality).
func (t *tx) EmptyTranscripts(ctx context.Context, orgID string, ids []string) (int, error) {
	return t.retentionWrite(ctx, orgID, ids, "empty transcripts",
		`UPDATE calls SET transcript = '[]' WHERE org_id = ? AND id IN (%s) AND CAST(transcript AS TEXT) <> '[]'`)
}

// retentionWrite runs an UPDATE over the organization's calls ids (query
// has %s for their placeholders) and counts the rows it changed.
func (t *tx) retentionWrite(ctx context.Context, orgID string, ids []string, what, query string) (int, error) {
	if !uuids(orgID) {
		return 0, nil
	}
	total := 0
	err := uuidBatches(ids, func(batch []any, _ string) error {
		// The list is padded (its last id again) to a power of two, so a
		// sweep's batches of every size make a handful of distinct
		// queries, not one per size for SQLite's prepared statements.
		args := append([]any{orgID}, batch...)
		for n := len(batch); n&(n-1) != 0; n++ {
			args = append(args, batch[len(batch)-1])
		}
		res, err := t.exec(ctx, fmt.Sprintf(query, placeholders(len(args)-1)), args...)
		if err != nil {
			return t.fail(err, "%s of organization %s", what, orgID)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("%s of organization %s: rows affected: %w", what, orgID, err)
		}
		total += int(n)
		return nil
	})
	return total, err
}

// AdvanceRetentionCursor writes the cursor unless it is already at or past
// (endedAt, id): a sweeper that lost its lease mid-batch cannot move it
// back over what the next holder did.
func (t *tx) AdvanceRetentionCursor(ctx context.Context, orgID, kind string, endedAt time.Time, id string) error {
	if !uuids(orgID, id) {
		return notFound("advance the %s retention cursor of organization %s", kind, orgID)
	}
	_, err := t.exec(ctx, `INSERT INTO retention_cursors (org_id, kind, ended_at, call_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (org_id, kind) DO UPDATE SET ended_at = excluded.ended_at, call_id = excluded.call_id
		WHERE (excluded.ended_at, excluded.call_id) > (retention_cursors.ended_at, retention_cursors.call_id)`,
		orgID, kind, t.time(endedAt), id)
	if err != nil {
		return t.fail(err, "advance the %s retention cursor of organization %s", kind, orgID)
	}
	return nil
}

// RecordingOrg reads the call by its primary key alone.
func (t *tx) RecordingOrg(ctx context.Context, id string) (string, error) {
	if !uuids(id) {
		return "", notFound("the recording of call %s", id)
	}
	scan := func(r rowScanner) (string, error) {
		var org string
		err := r.Scan(&org)
		return org, err
	}
	return get(ctx, t, scan, "the recording of call "+id,
		`SELECT org_id FROM calls WHERE id = ? AND recording_url IS NOT NULL`, id)
}

// ClaimSingleton inserts the lease, or takes it over when it is owner's
// or ran out before now; one statement, so two claimants cannot both win.
func (t *tx) ClaimSingleton(ctx context.Context, name, owner string, now, until time.Time) (bool, error) {
	res, err := t.exec(ctx, `INSERT INTO singletons (name, owner, lease_until) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
		WHERE singletons.owner = excluded.owner OR singletons.lease_until < ?`,
		name, owner, t.time(until), t.time(now))
	if err != nil {
		return false, t.fail(err, "claim the %s lease", name)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim the %s lease: rows affected: %w", name, err)
	}
	return n == 1, nil
}

// ReleaseSingleton deletes owner's lease on name.
func (t *tx) ReleaseSingleton(ctx context.Context, name, owner string) error {
	if _, err := t.exec(ctx, `DELETE FROM singletons WHERE name = ? AND owner = ?`, name, owner); err != nil {
		return t.fail(err, "release the %s lease", name)
	}
	return nil
}
