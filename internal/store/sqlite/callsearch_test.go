package sqlite_test

import (
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// TestCallSearchMigration takes 00008 down and up again over stored calls,
// which it must index, then deletes a call and an organization with SQL (no
// Tx method deletes a call, but the triggers are there): their index rows
// go with them, and new calls are indexed after the ones backfilled.
func TestCallSearchMigration(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	p, err := goose.NewProvider(goose.DialectSQLite3, s.DB(), migrations.SQLite(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	orgs := []model.Organization{{Name: "a"}, {Name: "b"}}
	var calls []model.Call
	// Written as 00007's schema has them: the store writes columns later
	// migrations add.
	create := func(org model.Organization, name string) {
		t.Helper()
		c := model.Call{ID: model.NewID(), OrgID: org.ID}
		now := sqlstore.FormatTime(model.Now())
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO calls (id, org_id, agent_id, agent_name, direction, status,
			from_number, to_number, variables, prompt, transcript, metrics, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'INBOUND', 'COMPLETED', '+15550000001', '+15550000002', '{}', '', '[]', '{}', ?, ?)`,
			c.ID, c.OrgID, model.NewID(), name, now, now); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	if err := s.Update(ctx, func(tx store.Tx) error {
		for i := range orgs {
			if err := tx.CreateOrg(ctx, &orgs[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		create(orgs[i%2], []string{"Zed", "Zed Two", "Yan"}[i%3])
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	found := func(org model.Organization, q string) []string {
		t.Helper()
		var ids []string
		err := s.View(ctx, func(tx store.Tx) error {
			rows, total, err := tx.ListCalls(ctx, org.ID, store.CallFilter{Query: q, Page: store.Page{SortDir: store.Asc}})
			for _, c := range rows {
				ids = append(ids, c.ID)
			}
			if err == nil && total != len(rows) {
				t.Errorf("q %q: total %d of %d rows", q, total, len(rows))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	want := func(got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("found %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("found %v, want %v", got, want)
			}
		}
	}
	want(found(orgs[0], "zed"), calls[0].ID, calls[4].ID)
	want(found(orgs[1], "zed"), calls[1].ID, calls[3].ID)
	create(orgs[0], "Zed Three")
	want(found(orgs[0], "zed"), calls[0].ID, calls[4].ID, calls[6].ID)
	if _, err := s.DB().ExecContext(ctx, "DELETE FROM calls WHERE id = ?", calls[4].ID); err != nil {
		t.Fatal(err)
	}
	want(found(orgs[0], "zed"), calls[0].ID, calls[6].ID)
	if _, err := s.DB().ExecContext(ctx, "DELETE FROM organizations WHERE id = ?", orgs[1].ID); err != nil {
		t.Fatal(err)
	}
	var keys, indexed int
	if err := s.DB().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM call_search_keys),
		(SELECT count(*) FROM calls_search WHERE calls_search MATCH '"+1555"')`).Scan(&keys, &indexed); err != nil {
		t.Fatal(err)
	}
	if keys != 3 || indexed != 3 {
		t.Fatalf("%d keys and %d indexed calls left, want the organization's 3", keys, indexed)
	}
}
