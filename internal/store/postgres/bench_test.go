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
		indexes, err := callIndexes(ctx, conn)
		if err != nil {
			return err
		}
		for name := range indexes {
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
		for _, def := range indexes {
			if _, err := conn.ExecContext(ctx, def); err != nil {
				return err
			}
		}
		_, err = conn.ExecContext(ctx, "VACUUM ANALYZE calls")
		return err
	}
}

// callIndexes is the definition of every index of calls but its primary key.
func callIndexes(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, `SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename = 'calls' AND indexname <> 'calls_pkey'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, err
		}
		out[name] = def
	}
	if len(out) == 0 {
		return nil, errors.New("calls has no indexes to drop")
	}
	return out, rows.Err()
}
