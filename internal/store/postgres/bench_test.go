package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"github.com/parley-voice/parley/internal/store/storetest"
)

// BenchmarkListCalls seeds PARLEY_BENCH_CALLS calls (default 1,000,000) in a
// fresh schema of PARLEY_TEST_DATABASE_URL and measures call list pages:
//
//	go test -run '^$' -bench ListCalls -benchtime 100x ./internal/store/postgres
func BenchmarkListCalls(b *testing.B) {
	s := open(b, databaseURL(b))
	storetest.BenchListCalls(b, s, copyLoader(s))
}

// BenchmarkSearchKnowledgeChunks seeds PARLEY_BENCH_CHUNKS chunks (default
// 100,000) in one knowledge base in a fresh schema of
// PARLEY_TEST_DATABASE_URL and measures full-text searches:
//
//	go test -run '^$' -bench SearchKnowledgeChunks -benchtime 200x ./internal/store/postgres
func BenchmarkSearchKnowledgeChunks(b *testing.B) {
	s := open(b, databaseURL(b))
	// As autovacuum would have by the time the base is queried: statistics
	// for the planner, the visibility map, GIN's pending list merged.
	storetest.BenchSearchKnowledgeChunks(b, s, func(ctx context.Context) error {
		_, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE knowledge_chunks, knowledge_base_sources")
		return err
	})
}

// BenchmarkDueCampaignRecipients measures the dispatcher's page of due
// recipients in campaigns of 1,000 and PARLEY_BENCH_RECIPIENTS (default
// 100,000) pending recipients, half parked or not, in a fresh schema of
// PARLEY_TEST_DATABASE_URL:
//
//	go test -run '^$' -bench DueCampaignRecipients ./internal/store/postgres
func BenchmarkDueCampaignRecipients(b *testing.B) {
	s := open(b, databaseURL(b))
	// As autovacuum would have after a large upload: statistics for the
	// planner, and the visibility map.
	storetest.BenchDueCampaignRecipients(b, s, func(ctx context.Context) error {
		_, err := s.DB().ExecContext(ctx, "VACUUM ANALYZE campaign_recipients")
		return err
	})
}

// BenchmarkAddCampaignRecipients measures storing PARLEY_BENCH_RECIPIENTS
// (default 100,000) recipients in one transaction, as a CSV upload does, in
// a fresh schema of PARLEY_TEST_DATABASE_URL:
//
//	go test -run '^$' -bench AddCampaignRecipients -benchtime 3x ./internal/store/postgres
func BenchmarkAddCampaignRecipients(b *testing.B) {
	storetest.BenchAddCampaignRecipients(b, open(b, databaseURL(b)))
}

// copyLoader COPYs calls in, with the secondary indexes of calls dropped
// during the load and built again after it, then vacuums and analyzes the
// table, as autovacuum would have by the time a table holds a million rows
// (index-only scans need the visibility map it sets).
func copyLoader(s *sqlstore.Store) storetest.CallLoader {
	return func(ctx context.Context, batches iter.Seq[[]model.Call]) error {
		conn, err := s.DB().Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		names, defs, err := callIndexes(ctx, conn)
		if err != nil {
			return err
		}
		for _, name := range names {
			if _, err := conn.ExecContext(ctx, "DROP INDEX "+pgx.Identifier{name}.Sanitize()); err != nil {
				return err
			}
		}
		toTime := func(t time.Time) any { return t }
		for batch := range batches {
			err := conn.Raw(func(dc any) error {
				_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{"calls"}, storetest.CallColumns,
					pgx.CopyFromSlice(len(batch), func(i int) ([]any, error) { return storetest.CallValues(batch[i], toTime) }))
				return err
			})
			if err != nil {
				return err
			}
		}
		if _, err := conn.ExecContext(ctx, "SET maintenance_work_mem = '256MB'"); err != nil {
			return err
		}
		for _, def := range defs {
			if _, err := conn.ExecContext(ctx, def); err != nil {
				return err
			}
		}
		_, err = conn.ExecContext(ctx, "VACUUM ANALYZE calls")
		return err
	}
}

// callIndexes names and defines every index of calls but its primary key,
// in the order they were created.
func callIndexes(ctx context.Context, conn *sql.Conn) (names, defs []string, err error) {
	rows, err := conn.QueryContext(ctx, `SELECT i.indexname, i.indexdef FROM pg_indexes i
		JOIN pg_class c ON c.relname = i.indexname AND c.relnamespace = current_schema()::regnamespace
		WHERE i.schemaname = current_schema() AND i.tablename = 'calls' AND i.indexname <> 'calls_pkey'
		ORDER BY c.oid`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, nil, err
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return nil, nil, errors.New("calls has no indexes to drop")
	}
	return names, defs, nil
}
