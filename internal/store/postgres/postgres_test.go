package postgres_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"
	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"github.com/parley-voice/parley/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgtest.Main(m))
}

// databaseURL is the server the tests use. Without one they skip, except in
// CI, which must never pass by skipping PostgreSQL.
func databaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PARLEY_TEST_DATABASE_URL is not set: CI must run the PostgreSQL store tests")
		}
		t.Skip("PARLEY_TEST_DATABASE_URL is not set: skipping the PostgreSQL store tests " +
			"(e.g. PARLEY_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	return u
}

// newSchema names a schema no other test uses.
func newSchema() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "parley_test_" + hex.EncodeToString(b)
}

// open returns a store in a fresh schema, dropped with it when t ends.
func open(t testing.TB, dbURL string, opts ...postgres.Option) *sqlstore.Store {
	t.Helper()
	schema := newSchema()
	s, err := postgres.Open(t.Context(), dbURL, append([]postgres.Option{postgres.WithSchema(schema), postgres.WithMaxConns(4)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropSchema(t, s, schema) })
	return s
}

// unsynced is dbURL with commits that do not wait for the WAL's flush
// (synchronous_commit=off, a session setting pgx passes to the server):
// the suite's cases write and empty their schemas (a few are migrated,
// each migration in a transaction of its own), and it does not test
// durability. A URL
// that is not postgres:// is left as it is.
func unsynced(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dbURL
	}
	q := u.Query()
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

func dropSchema(t testing.TB, s *sqlstore.Store, schema string) {
	t.Helper()
	// t.Context is already done when cleanups run.
	if _, err := s.DB().Exec("DROP SCHEMA " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err != nil {
		t.Errorf("drop schema %s: %v", schema, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestStore(t *testing.T) {
	dbURL := databaseURL(t)
	t.Run("postgres", func(t *testing.T) {
		// Each case in a schema of its own, migrated once and emptied
		// for the next case when one ends (pgtest.Open).
		url := unsynced(dbURL)
		storetest.Run(t, func(t *testing.T) store.Store { return pgtest.Open(t, url, "parley_test", postgres.WithMaxConns(4)) })
	})
}

// TestConcurrentMigrate opens one schema from several processes' worth of
// pools at once: the advisory lock lets one migrate and the rest find it done.
func TestConcurrentMigrate(t *testing.T) {
	dbURL := databaseURL(t)
	schema := newSchema()
	const n = 4
	stores := make([]*sqlstore.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			stores[i], errs[i] = postgres.Open(t.Context(), dbURL, postgres.WithSchema(schema), postgres.WithMaxConns(2))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
	for i, s := range stores {
		if s == nil {
			continue
		}
		if i == 0 {
			defer dropSchema(t, s, schema)
		} else {
			defer s.Close()
		}
	}
	if t.Failed() {
		return
	}
	ctx := t.Context()
	if err := stores[1].Update(ctx, func(tx store.Tx) error {
		return tx.CreateOrg(ctx, &model.Organization{Name: "shared"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := stores[3].View(ctx, func(tx store.Tx) error {
		_, err := tx.GetOrgByName(ctx, "shared")
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSearchPathInURL picks the schema with the URL's search_path instead of
// WithSchema; the schema must then exist already.
func TestSearchPathInURL(t *testing.T) {
	dbURL := databaseURL(t)
	admin := open(t, dbURL, postgres.WithoutMigrate())
	schema := newSchema()
	if _, err := admin.DB().ExecContext(t.Context(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer dropSchema(t, s, schema)
	var tables int
	err = s.DB().QueryRowContext(t.Context(),
		"SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename = 'agents'", schema).Scan(&tables)
	if err != nil || tables != 1 {
		t.Fatalf("agents tables in %s: %d, %v", schema, tables, err)
	}
}

// TestUUIDColumnsScanAsStrings checks the pgx database/sql adapter hands uuid
// columns over as canonical strings, which every model id relies on.
func TestUUIDColumnsScanAsStrings(t *testing.T) {
	s := open(t, databaseURL(t))
	ctx := t.Context()
	o := model.Organization{ID: "0193F3A2-7C1B-7000-8000-00000000ABCD", Name: "upper"}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &o) }); err != nil {
		t.Fatal(err)
	}
	var got model.Organization
	if err := s.View(ctx, func(tx store.Tx) (err error) { got, err = tx.GetOrgByName(ctx, "upper"); return }); err != nil {
		t.Fatal(err)
	}
	if want := "0193f3a2-7c1b-7000-8000-00000000abcd"; got.ID != want {
		t.Fatalf("id = %q, want %q", got.ID, want)
	}
}

// TestKnowledgeMigration applies 00003 over sources written before it: NULL
// mime_type and file_size are filled in; and goes back down and up again.
func TestKnowledgeMigration(t *testing.T) {
	ctx := t.Context()
	s := open(t, databaseURL(t), postgres.WithoutMigrate())
	p, err := goose.NewProvider(goose.DialectPostgres, s.DB(), migrations.Postgres(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// The organization is written as the schema of 00002 has it: the
	// store's CreateOrg writes today's columns.
	org := model.Organization{ID: model.NewID(), Name: "o", CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO organizations (id, name, concurrency_limit, created_at, updated_at)
		VALUES ($1, 'o', 10, $2, $2)`, org.ID, org.CreatedAt); err != nil {
		t.Fatal(err)
	}
	kb := model.KnowledgeBase{Name: "kb", OrgID: org.ID}
	err = s.Update(ctx, func(tx store.Tx) error { return tx.CreateKnowledgeBase(ctx, &kb) })
	if err != nil {
		t.Fatal(err)
	}
	ts := func(ms int) time.Time { return time.Date(2025, 1, 2, 3, 4, 5, ms*int(time.Millisecond), time.UTC) }
	bare, full := model.NewID(), model.NewID()
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO knowledge_base_sources
		(id, org_id, knowledge_base_id, display_name, content, original_url, mime_type, file_size, error_message, created_at, updated_at)
		VALUES ($1, $2, $3, 'bare', 'héllo', NULL, NULL, NULL, NULL, $4, $5),
		       ($6, $2, $3, 'full', 'x', 'https://example.com/x', 'text/html', 42, 'boom', $7, $8)`,
		bare, org.ID, kb.ID, ts(6), ts(7), full, ts(8), ts(9)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var got []model.KnowledgeSource
	if err := s.View(ctx, func(tx store.Tx) (err error) { got, err = tx.ListKnowledgeSources(ctx, org.ID, kb.ID); return }); err != nil {
		t.Fatal(err)
	}
	link, boom := "https://example.com/x", "boom"
	want := []model.KnowledgeSource{
		{ID: bare, OrgID: org.ID, KnowledgeBaseID: kb.ID, DisplayName: "bare", Content: "héllo", MimeType: "text/plain",
			FileSize: 6, CreatedAt: ts(6), UpdatedAt: ts(7)},
		{ID: full, OrgID: org.ID, KnowledgeBaseID: kb.ID, DisplayName: "full", Content: "x", OriginalURL: &link,
			MimeType: "text/html", FileSize: 42, ErrorMessage: &boom, CreatedAt: ts(8), UpdatedAt: ts(9)},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("sources after migrating (-want +got):\n%s", d)
	}
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM knowledge_base_sources").Scan(&n); err != nil || n != 2 {
		t.Fatalf("sources after migrating down: %d, %v", n, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMessagesMigration takes 00004 down and up again, and checks deleting
// an organization deletes its messages.
func TestMessagesMigration(t *testing.T) {
	ctx := t.Context()
	s := open(t, databaseURL(t))
	p, err := goose.NewProvider(goose.DialectPostgres, s.DB(), migrations.Postgres(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	org := model.Organization{Name: "o"}
	create := func() error {
		return s.Update(ctx, func(tx store.Tx) error {
			m := model.Message{OrgID: org.ID, ConversationID: "c", Channel: model.ChannelSMS, Direction: model.Outbound,
				FromNumber: "+15550000001", ToNumber: "+15550000002", Body: "hi", Status: model.MessageQueued}
			return tx.CreateMessage(ctx, &m)
		})
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &org) }); err != nil {
		t.Fatal(err)
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 3); err != nil {
		t.Fatal(err)
	}
	var exists bool
	if err := s.DB().QueryRowContext(ctx, "SELECT to_regclass('messages') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Fatalf("messages still there after migrating down: %v, %v", exists, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := s.DB().ExecContext(ctx, "DELETE FROM organizations WHERE id = $1", org.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil || n != 0 {
		t.Fatalf("messages left after deleting their organization: %d, %v", n, err)
	}
}

func TestLiveCountOnDelete(t *testing.T) {
	s := open(t, databaseURL(t))
	storetest.LiveCountOnDelete(t, s, func(ids ...string) error {
		marks := make([]string, len(ids))
		args := make([]any, len(ids))
		for i, id := range ids {
			marks[i], args[i] = "$"+strconv.Itoa(i+1), id
		}
		_, err := s.DB().ExecContext(t.Context(), "DELETE FROM calls WHERE id IN ("+strings.Join(marks, ", ")+")", args...)
		return err
	})
}

// TestDueRecipientsPlan: the dispatcher's read of a campaign's due
// recipients is one range of campaign_recipients_due, in the order it
// returns them (no sort, no scan of the table), so its cost does not grow
// with the campaign. Planned with statistics, as autovacuum keeps them.
func TestDueRecipientsPlan(t *testing.T) {
	s := open(t, databaseURL(t))
	query := sqlstore.DueRecipientsQuery()
	for i := 1; strings.Contains(query, "?"); i++ {
		query = strings.Replace(query, "?", "$"+strconv.Itoa(i), 1)
	}
	plan := storetest.DueRecipientsPlan(t, s, 20000, query, func(query string, args ...any) string {
		if _, err := s.DB().ExecContext(t.Context(), "ANALYZE campaign_recipients"); err != nil {
			t.Fatal(err)
		}
		return explain(t, s.DB(), query, args...)
	})
	if !strings.Contains(plan, "Index Scan using campaign_recipients_due") ||
		strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Bitmap") {
		t.Fatalf("the due recipients are not one ordered range of campaign_recipients_due:\n%s", plan)
	}
}

// The retention sweeper's batch reads calls_org_ended_asc in order from the
// cursor (no sort: its cost is the batch, not the calls swept before it).
// The table is empty, so sequential scans are ruled out to see the index
// plan the planner picks on a big one.
func TestEndedCallsPlan(t *testing.T) {
	s := open(t, databaseURL(t))
	query := sqlstore.EndedCallsQuery("postgres")
	for i := 1; strings.Contains(query, "?"); i++ {
		query = strings.Replace(query, "?", "$"+strconv.Itoa(i), 1)
	}
	tx, err := s.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(t.Context(), "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	plan := explain(t, tx, query, model.NewID(), time.Now(), time.Unix(0, 0), model.NewID(), 200)
	if !strings.Contains(plan, "using calls_org_ended_asc") || !strings.Contains(plan, "ROW(ended_at, id) >") ||
		strings.Contains(plan, "Sort") || strings.Contains(plan, "Filter") {
		t.Fatalf("the ended calls after a cursor are not one ordered range of calls_org_ended_asc:\n%s", plan)
	}
}

// explain is PostgreSQL's plan of query with args, a node a line, read
// through q (the pool, or a transaction with its own settings).
func explain(t *testing.T, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, args ...any) string {
	t.Helper()
	rows, err := q.QueryContext(t.Context(), "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
