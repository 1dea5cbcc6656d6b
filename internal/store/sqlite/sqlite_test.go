package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pressly/goose/v3"
	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"github.com/parley-voice/parley/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// open returns a migrated store in a fresh file, closed when t ends: a copy
// of sqlitetest's template, so only the tests about migrating migrate.
func open(t *testing.T, opts ...sqlite.Option) *sqlstore.Store {
	t.Helper()
	return sqlitetest.Open(t, opts...)
}

func TestStore(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
	})
}

func TestPragmas(t *testing.T) {
	s := open(t)
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"synchronous":  "1", // NORMAL
		"busy_timeout": "10000",
		"temp_store":   "2", // MEMORY
	} {
		var got string
		if err := s.DB().QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %s, want %s", pragma, got, want)
		}
	}
}

func TestMemory(t *testing.T) {
	s, err := sqlite.Open(t.Context(), sqlite.Memory)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		t.Fatal(err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error { return tx.CreateOrg(t.Context(), &model.Organization{Name: "m"}) })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(file)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary directory of %s still there after Close: %v", file, err)
	}
}

func TestMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	s, err := sqlite.Open(t.Context(), path, sqlite.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(t.Context(), "SELECT 1 FROM organizations"); err == nil {
		t.Fatal("tables exist before migrating")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // applying twice is a no-op
		if err := sqlite.Migrate(t.Context(), path); err != nil {
			t.Fatal(err)
		}
	}
	s, err = sqlite.Open(t.Context(), path, sqlite.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	if err := s.View(t.Context(), func(tx store.Tx) (err error) { n, err = tx.CountOrgs(t.Context()); return }); err != nil || n != 0 {
		t.Fatalf("count after migrate = %d, %v", n, err)
	}
}

// TestKnowledgeMigration applies 00003 over sources written before it:
// SQLite rebuilds the table, which must keep every row, fill mime_type and
// file_size where they were NULL, and keep the cascade from the base; and
// goes back down and up again.
func TestKnowledgeMigration(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "parley.db"), sqlite.WithoutMigrate())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, s.DB(), migrations.SQLite(), goose.WithDisableGlobalRegistry(true))
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
		VALUES (?, 'o', 10, ?, ?)`, org.ID, sqlstore.FormatTime(org.CreatedAt), sqlstore.FormatTime(org.CreatedAt)); err != nil {
		t.Fatal(err)
	}
	kb := model.KnowledgeBase{Name: "kb", OrgID: org.ID}
	err = s.Update(ctx, func(tx store.Tx) error { return tx.CreateKnowledgeBase(ctx, &kb) })
	if err != nil {
		t.Fatal(err)
	}
	bare, full := model.NewID(), model.NewID()
	if _, err := s.DB().ExecContext(ctx, `INSERT INTO knowledge_base_sources
		(id, org_id, knowledge_base_id, display_name, content, original_url, mime_type, file_size, error_message, created_at, updated_at)
		VALUES (?, ?, ?, 'bare', 'héllo', NULL, NULL, NULL, NULL, '2025-01-02T03:04:05.006Z', '2025-01-02T03:04:05.007Z'),
		       (?, ?, ?, 'full', 'x', 'https://example.com/x', 'text/html', 42, 'boom', '2025-01-02T03:04:05.008Z', '2025-01-02T03:04:05.009Z')`,
		bare, org.ID, kb.ID, full, org.ID, kb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	var got []model.KnowledgeSource
	if err := s.View(ctx, func(tx store.Tx) (err error) { got, err = tx.ListKnowledgeSources(ctx, org.ID, kb.ID); return }); err != nil {
		t.Fatal(err)
	}
	ts := func(ms int) time.Time { return time.Date(2025, 1, 2, 3, 4, 5, ms*int(time.Millisecond), time.UTC) }
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

	// Down keeps the sources, then up again.
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM knowledge_base_sources WHERE mime_type IS NOT NULL").Scan(&n); err != nil || n != 2 {
		t.Fatalf("sources after migrating down: %d, %v", n, err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx store.Tx) error {
		return tx.ReplaceKnowledgeChunks(ctx, org.ID, kb.ID, bare, []model.KnowledgeChunk{{Text: "hello"}})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.DeleteKnowledgeBase(ctx, org.ID, kb.ID) }); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"knowledge_base_sources", "knowledge_chunks"} {
		if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s left after deleting their knowledge base: %d, %v", table, n, err)
		}
	}
	checkFTS(t, s, kb.ID)
}

// checkFTS checks the chunk index is in step with knowledge_chunks (the
// triggers kept it): FTS5's integrity check passes, it has a row for every
// chunk and no other, with the chunk's source_id and seq, and each of kbIDs
// has as many chunks under its token as in the table.
func checkFTS(t *testing.T, s *sqlstore.Store, kbIDs ...string) {
	t.Helper()
	ctx := t.Context()
	db := s.DB()
	if _, err := db.ExecContext(ctx, "INSERT INTO knowledge_chunks_fts (knowledge_chunks_fts) VALUES ('integrity-check')"); err != nil {
		t.Fatalf("FTS integrity check: %v", err)
	}
	var chunks, indexed, same int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM knowledge_chunks), (SELECT count(*) FROM knowledge_chunks_fts),
		(SELECT count(*) FROM knowledge_chunks c JOIN knowledge_chunks_fts f ON f.rowid = c.id
			WHERE f.source_id = c.source_id AND f.seq = c.seq)`).Scan(&chunks, &indexed, &same); err != nil {
		t.Fatal(err)
	}
	if chunks != indexed || chunks != same {
		t.Fatalf("%d chunks, %d indexed, %d of them alike", chunks, indexed, same)
	}
	for _, kb := range kbIDs {
		var inTable, inIndex int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM knowledge_chunks WHERE knowledge_base_id = ?", kb).Scan(&inTable); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM knowledge_chunks_fts WHERE knowledge_chunks_fts MATCH ?",
			`kb : "k`+strings.ReplaceAll(kb, "-", "")+`0"`).Scan(&inIndex); err != nil {
			t.Fatal(err)
		}
		if inTable != inIndex {
			t.Fatalf("knowledge base %s: %d chunks, %d indexed", kb, inTable, inIndex)
		}
	}
}

// TestKnowledgeFTSInStep replaces, deletes and cascades chunks away, checking
// the FTS5 index against the table after each.
func TestKnowledgeFTSInStep(t *testing.T) {
	s := open(t)
	ctx := t.Context()
	org := model.Organization{Name: "o"}
	var kbs [2]model.KnowledgeBase
	var srcs [4]model.KnowledgeSource
	update := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
		checkFTS(t, s, kbs[0].ID, kbs[1].ID)
	}
	chunks := func(words ...string) []model.KnowledgeChunk {
		var out []model.KnowledgeChunk
		for i, w := range words {
			out = append(out, model.KnowledgeChunk{Seq: i, Text: w + " and some more words"})
		}
		return out
	}
	update(func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		for i := range kbs {
			kbs[i] = model.KnowledgeBase{OrgID: org.ID, Name: "kb"}
			if err := tx.CreateKnowledgeBase(ctx, &kbs[i]); err != nil {
				return err
			}
		}
		for i := range srcs {
			srcs[i] = model.KnowledgeSource{OrgID: org.ID, KnowledgeBaseID: kbs[i%2].ID, DisplayName: "doc"}
			if err := tx.CreateKnowledgeSource(ctx, &srcs[i]); err != nil {
				return err
			}
			if err := tx.ReplaceKnowledgeChunks(ctx, org.ID, srcs[i].KnowledgeBaseID, srcs[i].ID, chunks("alpha", "beta", "gamma")); err != nil {
				return err
			}
		}
		return nil
	})
	update(func(tx store.Tx) error {
		return tx.ReplaceKnowledgeChunks(ctx, org.ID, kbs[0].ID, srcs[0].ID, chunks("delta"))
	})
	update(func(tx store.Tx) error { return tx.DeleteKnowledgeSource(ctx, org.ID, kbs[1].ID, srcs[1].ID) })
	update(func(tx store.Tx) error { return tx.DeleteKnowledgeBase(ctx, org.ID, kbs[0].ID) })
	// No Tx method updates a chunk, but the trigger is there.
	if _, err := s.DB().ExecContext(ctx, "UPDATE knowledge_chunks SET text = 'epsilon', seq = 9 WHERE seq = 0"); err != nil {
		t.Fatal(err)
	}
	checkFTS(t, s, kbs[0].ID, kbs[1].ID)
	var hits []store.ChunkHit
	if err := s.View(ctx, func(tx store.Tx) (err error) {
		hits, err = tx.SearchKnowledgeChunks(ctx, org.ID, []string{kbs[1].ID}, "alpha epsilon", 10)
		return err
	}); err != nil || len(hits) != 1 || hits[0].Text != "epsilon" || hits[0].Seq != 9 {
		t.Fatalf("search after an update: %+v, %v", hits, err)
	}
	var rows int
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM knowledge_chunks").Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d chunks in the table (%v): want the 3 of the one source left", rows, err)
	}
}

// TestMessagesMigration takes 00004 down and up again, and checks deleting
// an organization deletes its messages.
func TestMessagesMigration(t *testing.T) {
	ctx := t.Context()
	s := open(t)
	p, err := goose.NewProvider(goose.DialectSQLite3, s.DB(), migrations.SQLite(), goose.WithDisableGlobalRegistry(true))
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
	if _, err := s.DB().ExecContext(ctx, "SELECT 1 FROM messages"); err == nil {
		t.Fatal("messages still there after migrating down")
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := s.DB().ExecContext(ctx, "DELETE FROM organizations WHERE id = ?", org.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil || n != 0 {
		t.Fatalf("messages left after deleting their organization: %d, %v", n, err)
	}
}

func TestLiveCountOnDelete(t *testing.T) {
	s := open(t)
	storetest.LiveCountOnDelete(t, s, func(ids ...string) error {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		_, err := s.DB().ExecContext(t.Context(), "DELETE FROM calls WHERE id IN (?"+strings.Repeat(", ?", len(ids)-1)+")", args...)
		return err
	})
}

// TestDueRecipientsPlan: the dispatcher's read of a campaign's due
// recipients is one range of campaign_recipients_due, in the order it
// returns them (no sort), so its cost does not grow with the campaign.
// SQLite plans without statistics here, as in production (no ANALYZE).
func TestDueRecipientsPlan(t *testing.T) {
	s := open(t)
	// Without statistics the plan does not depend on the rows: a few do.
	plan := storetest.DueRecipientsPlan(t, s, 500, sqlstore.DueRecipientsQuery(), func(query string, args ...any) string {
		return explain(t, s, query, args...)
	})
	if !strings.Contains(plan, "USING INDEX campaign_recipients_due (org_id=? AND campaign_id=? AND next_attempt_at<?)") ||
		strings.Contains(plan, "TEMP B-TREE") {
		t.Fatalf("the due recipients are not one ordered range of campaign_recipients_due:\n%s", plan)
	}
}

// The retention sweeper's batch is one range of calls_org_ended_asc, read
// in order: its cost is the batch, not the calls swept before it.
func TestEndedCallsPlan(t *testing.T) {
	s := open(t)
	plan := explain(t, s, sqlstore.EndedCallsQuery("sqlite"),
		model.NewID(), sqlstore.FormatTime(time.Now()), sqlstore.FormatTime(time.Unix(0, 0)), model.NewID(), 200)
	if !strings.Contains(plan, "calls_org_ended_asc (org_id=? AND <expr>=? AND (ended_at,id)>(?,?) AND ended_at<?)") ||
		strings.Contains(plan, "TEMP B-TREE") {
		t.Fatalf("the ended calls after a cursor are not one ordered range of calls_org_ended_asc:\n%s", plan)
	}
}

// explain is SQLite's plan of query with args, a step a line.
func explain(t *testing.T, s *sqlstore.Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}
