package sqlite_test

import (
	"context"
	"errors"
	"iter"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store/migrations"
	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"github.com/parley-voice/parley/internal/store/storetest"
)

// BenchmarkListCalls seeds PARLEY_BENCH_CALLS calls (default 1,000,000) in a
// fresh database file and measures call list pages:
//
//	go test -run '^$' -bench ListCalls -benchtime 100x ./internal/store/sqlite
func BenchmarkListCalls(b *testing.B) {
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchListCalls(b, s, bulkLoader(s))
}

// BenchmarkSearchKnowledgeChunks seeds PARLEY_BENCH_CHUNKS chunks (default
// 100,000) in one knowledge base of a fresh database file and measures
// full-text searches:
//
//	go test -run '^$' -bench SearchKnowledgeChunks -benchtime 200x ./internal/store/sqlite
func BenchmarkSearchKnowledgeChunks(b *testing.B) {
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchSearchKnowledgeChunks(b, s, func(ctx context.Context) error {
		_, err := s.DB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	})
}

// callSearchMigration is the migration that creates the call search index.
const callSearchMigration = 8

// bulkLoader inserts calls with multi-row INSERTs on the writer connection,
// one transaction per batch, with the calls indexes dropped during the load
// and built again after it (sorting once beats a million random index
// inserts), and a larger page cache meanwhile. The call search index
// (migration 00008) is taken down for the load and up again after it, so
// the migration's backfill indexes the calls in one pass rather than its
// triggers one call at a time.
func bulkLoader(s *sqlstore.Store) storetest.CallLoader {
	const rows = 500 // 31 columns: far below SQLite's 32766 parameters
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(storetest.CallColumns)), ", ") + ")"
	insert := func(n int) string {
		return "INSERT INTO calls (" + strings.Join(storetest.CallColumns, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	}
	full := insert(rows)
	toTime := func(t time.Time) any { return sqlstore.FormatTime(t) }
	db := s.DB()

	loadBatch := func(ctx context.Context, calls []model.Call) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		stmt, err := tx.PrepareContext(ctx, full)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for len(calls) > 0 {
			chunk := calls[:min(rows, len(calls))]
			calls = calls[len(chunk):]
			args := make([]any, 0, len(chunk)*len(storetest.CallColumns))
			for _, c := range chunk {
				v, err := storetest.CallValues(c, toTime)
				if err != nil {
					return err
				}
				args = append(args, v...)
			}
			if len(chunk) == rows {
				_, err = stmt.ExecContext(ctx, args...)
			} else {
				_, err = tx.ExecContext(ctx, insert(len(chunk)), args...)
			}
			if err != nil {
				return err
			}
		}
		return tx.Commit()
	}

	return func(ctx context.Context, batches iter.Seq[[]model.Call]) (err error) {
		rows, err := db.QueryContext(ctx,
			`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'calls' AND sql IS NOT NULL
			ORDER BY rowid`) // built again in the same order: the planner breaks ties by it
		if err != nil {
			return err
		}
		var names, defs []string
		for rows.Next() {
			var name, sql string
			if err := rows.Scan(&name, &sql); err != nil {
				return errors.Join(err, rows.Close())
			}
			names, defs = append(names, name), append(defs, sql)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		exec := func(query string) {
			if err == nil {
				_, err = db.ExecContext(ctx, query)
			}
		}
		exec("PRAGMA cache_size = -262144") // 256 MiB
		for _, name := range names {
			exec("DROP INDEX " + name)
		}
		if err != nil {
			return err
		}
		p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.SQLite(), goose.WithDisableGlobalRegistry(true))
		if err != nil {
			return err
		}
		if _, err := p.DownTo(ctx, callSearchMigration-1); err != nil {
			return err
		}
		for batch := range batches {
			if err := loadBatch(ctx, batch); err != nil {
				return err
			}
		}
		for _, def := range defs {
			exec(def)
		}
		if err != nil {
			return err
		}
		if _, err := p.Up(ctx); err != nil {
			return err
		}
		exec("PRAGMA cache_size = -2000") // SQLite's default, which the store runs with
		exec("PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	}
}

// BenchmarkDueCampaignRecipients measures the dispatcher's page of due
// recipients in campaigns of 1,000 and PARLEY_BENCH_RECIPIENTS (default
// 100,000) pending recipients, half parked or not:
//
//	go test -run '^$' -bench DueCampaignRecipients ./internal/store/sqlite
func BenchmarkDueCampaignRecipients(b *testing.B) {
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchDueCampaignRecipients(b, s, func(ctx context.Context) error {
		_, err := s.DB().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	})
}

// BenchmarkAddCampaignRecipients measures storing PARLEY_BENCH_RECIPIENTS
// (default 100,000) recipients in one transaction, as a CSV upload does:
//
//	go test -run '^$' -bench AddCampaignRecipients -benchtime 3x ./internal/store/sqlite
func BenchmarkAddCampaignRecipients(b *testing.B) {
	s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "parley.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchAddCampaignRecipients(b, s)
}
