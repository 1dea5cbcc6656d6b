package postgres

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlstore"
)

// dialect is PostgreSQL's part of the shared queries.
type dialect struct {
	rebound *sync.Map // query with ? -> query with $n
}

var _ sqlstore.Dialect = dialect{}

func (dialect) Engine() string { return "postgres" }

// Rebind numbers the ? placeholders $1, $2, ... outside quoted text. Queries
// are constants, so each is rewritten once.
func (d dialect) Rebind(query string) string {
	if q, ok := d.rebound.Load(query); ok {
		return q.(string)
	}
	q := rebind(query)
	d.rebound.Store(query, q)
	return q
}

func rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	var quote rune // the quote character we are inside, or 0
	for _, r := range query {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Time writes a time.Time; timestamptz keeps microseconds, and the value is
// already cut to milliseconds.
func (dialect) Time(t time.Time) any { return t }

// ByteOrder uses the "C" collation, which compares bytes.
func (dialect) ByteOrder(expr string) string { return expr + ` COLLATE "C"` }

// ForUpdate locks the selected rows as an UPDATE that keeps their keys
// would: FOR NO KEY UPDATE, which, unlike FOR UPDATE, leaves inserting rows
// that reference them (an organization's agents, calls) free. SKIP LOCKED
// lets concurrent workers take different rows instead of waiting on each
// other.
func (dialect) ForUpdate(skipLocked bool) string {
	if skipLocked {
		return " FOR NO KEY UPDATE SKIP LOCKED"
	}
	return " FOR NO KEY UPDATE"
}

// PostgreSQL error codes Parley tells apart.
const (
	uniqueViolation           = "23505"
	foreignKeyViolation       = "23503"
	invalidTextRepresentation = "22P02" // e.g. an id that is not a UUID
	duplicateSchema           = "42P06"
)

func (dialect) Sentinel(err error) error {
	var e *pgconn.PgError
	if !errors.As(err, &e) {
		return nil
	}
	switch e.Code {
	case uniqueViolation:
		return store.ErrConflict
	case foreignKeyViolation, invalidTextRepresentation:
		return store.ErrNotFound
	}
	return nil
}

// BestChunks ORs (or ANDs) the terms into one tsquery of the english
// configuration, which stems them and drops stop words as to_tsvector did
// the chunks', and ranks by ts_rank (ts_rank_cd's cover density costs about
// four times as much a chunk, for the same top three). The terms hold only
// letters and digits, none of to_tsquery's operators, so the query cannot
// be malformed. The planner picks between the GIN index of tsv and the
// base's rows. within bounds the ranked chunks to the first that a
// subquery of the same match finds.
func (dialect) BestChunks(orgID string, kbIDs, terms []string, all bool, within, limit int) (string, []any) {
	join := " | "
	if all {
		join = " & "
	}
	tsquery := strings.Join(terms, join)
	bases := `c.org_id = ? AND c.knowledge_base_id IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(kbIDs)), ", ") + `)`
	baseArgs := []any{orgID}
	for _, id := range kbIDs {
		baseArgs = append(baseArgs, id)
	}
	args := append([]any{tsquery}, baseArgs...)
	if within > 0 {
		bases += ` AND (c.source_id, c.seq) IN (SELECT c.source_id, c.seq FROM knowledge_chunks c
			WHERE c.tsv @@ to_tsquery('english', ?) AND ` + bases + ` LIMIT ?)`
		args = append(append(append(args, tsquery), baseArgs...), within)
	}
	return `SELECT c.source_id, c.seq, ts_rank(c.tsv, q) AS score
		FROM to_tsquery('english', ?) AS q JOIN knowledge_chunks c ON c.tsv @@ q
		WHERE ` + bases + `
		ORDER BY score DESC, c.source_id, c.seq LIMIT ?`, append(args, limit)
}

// ChunkTermCounts estimates from the statistics ANALYZE (or autovacuum)
// keeps of tsv: the share of chunks that hold each of its most common
// lexemes, times the table's rows. Counting in the GIN index would read a
// chunk for each match (to see it is visible), as costly as ranking it. A
// lexeme not among the most common, or a table not analyzed yet, counts 0:
// rare, so a base with no statistics ranks every term.
func (dialect) ChunkTermCounts(_ []string, terms []string, upTo int) (string, []any) {
	return `SELECT t.i - 1, LEAST(COALESCE((s.freqs[array_position(s.elems, l.lexeme)] * s.n)::bigint, 0), ?)
		FROM unnest(?::text[]) WITH ORDINALITY AS t (term, i)
		CROSS JOIN LATERAL (SELECT (tsvector_to_array(to_tsvector('english', t.term)))[1] AS lexeme) l
		LEFT JOIN (
			SELECT st.most_common_elems::text::text[] AS elems, st.most_common_elem_freqs AS freqs, GREATEST(c.reltuples, 0) AS n
			FROM pg_stats st JOIN pg_class c ON c.oid = to_regclass('knowledge_chunks')
			WHERE st.schemaname = current_schema() AND st.tablename = 'knowledge_chunks' AND st.attname = 'tsv'
		) s ON true
		ORDER BY t.i`, []any{upTo, terms}
}

// CallSearch is not needed: the list's LIKE filter of q is what the
// calls_search trigram index serves.
func (dialect) CallSearch(string, string) (string, string, []any, bool) { return "", "", nil, false }

// CustomPlans sets plan_cache_mode for the rest of the transaction.
func (dialect) CustomPlans() string { return "SET LOCAL plan_cache_mode = force_custom_plan" }
