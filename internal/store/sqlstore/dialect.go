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
	// ForUpdate is the clause a SELECT in a write transaction ends with to
	// lock the rows it returns until the transaction ends, passing over rows
	// another transaction holds when skipLocked; "" for an engine whose single
	// writer already serialises write transactions.
	ForUpdate(skipLocked bool) string
	// MatchChunks is the engine's full-text search of knowledge chunks for
	// any of terms (at least one; lower-case words of letters and digits,
	// stop words already dropped): a FROM item, with one ? placeholder for
	// arg, that yields the chunks matching at least one term as
	// knowledge_chunks aliased c; and the expression of a match's relevance,
	// higher is better.
	MatchChunks(terms []string) (from, score string, arg any)
}
