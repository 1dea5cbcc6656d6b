package sqlstore

import "time"

// Dialect is what differs between database engines. Queries are written with
// ? placeholders and rebound by the dialect before they run.
type Dialect interface {
	// Engine names the engine: "sqlite" or "postgres".
	Engine() string
	// Rebind rewrites a query's ? placeholders into the engine's style.
	Rebind(query string) string
	// Time is how t, already UTC with millisecond precision, is written.
	Time(t time.Time) any
	// ByteOrder makes a text expression sort by bytes, so both engines order
	// names and ids alike whatever the database's locale.
	ByteOrder(expr string) string
	// Sentinel names the store sentinel a driver error stands for
	// (store.ErrConflict, store.ErrNotFound), or nil when it stands for none.
	Sentinel(err error) error
	// Unavailable reports whether a driver error means the database could
	// not take the work right now (it cannot be reached, the connection was
	// lost, it is shutting down, out of connections, busy or full): the same
	// work may succeed later. The store answers it as store.ErrUnavailable.
	// A caller's own cancellation is never that.
	Unavailable(err error) bool
	// ForUpdate is the clause a SELECT in a write transaction ends with to
	// lock the rows it returns until the transaction ends, passing over rows
	// another transaction holds when skipLocked; "" for an engine whose single
	// writer already serialises write transactions.
	ForUpdate(skipLocked bool) string
	// BestChunks is the engine's full-text search: the source_id, seq and
	// score (higher is better) of the chunks of the knowledge bases kbIDs
	// (at least one, all the organization's: the caller checked) that match
	// any of terms (at least one; lower-case words of letters and digits,
	// stop words already dropped), or with all, every one of them, best
	// first, ties by source_id then seq, at most limit; with its arguments,
	// for ? placeholders. With within above zero it ranks only about the
	// first within chunks that match (in whatever order its index keeps
	// them): a bound on the work, not a choice of the best.
	BestChunks(orgID string, kbIDs, terms []string, all bool, within, limit int) (query string, args []any)
	// ChunkTermCounts is a query of about how many chunks hold each of
	// terms (as BestChunks takes them), one row (index in terms, count) a
	// term, counting no further than upTo: a measure of how rare each is,
	// cheap enough to ask before ranking. An engine may count the chunks of
	// every base rather than those of kbIDs, or estimate from its
	// statistics, whichever its index answers without reading chunks.
	ChunkTermCounts(kbIDs, terms []string, upTo int) (query string, args []any)
	// CallSearch is the engine's own index of a call list's q, when it has
	// one that finds exactly the calls the list's LIKE filter for q would
	// (ok false: the list filters with LIKE, which the engine's index may
	// serve): ids, a query of the ids (column call_id) of orgID's calls that
	// match q; count, a query of how many they are; both with args, for ?
	// placeholders.
	CallSearch(orgID, q string) (ids, count string, args []any, ok bool)
	// CustomPlans is the statement after which the transaction's queries
	// are planned for their arguments each time they run, or "" for an
	// engine that always plans them so. A query whose best plan hangs on an
	// argument needs it: PostgreSQL's generic plan of a LIKE on an unknown
	// pattern, cached after a few runs, walks every call of the list.
	CustomPlans() string
}
