// Package sqlstore is the one implementation of store.Store over
// database/sql, shared by the SQLite and PostgreSQL engines. It owns every
// query Parley makes; what differs between engines (placeholders, how a time
// is written, collation, which driver errors mean a conflict, and the one
// query that cannot be shared: the full-text ranking of knowledge chunks,
// FTS5 against tsvector) is a small Dialect supplied by store/sqlite or
// store/postgres, which also own opening the database and applying the
// migrations.
//
// Queries are written once with ? placeholders; the dialect rebinds them.
// Every tenant-owned query is scoped by org_id, so another organization's id
// answers store.ErrNotFound exactly like a missing one. Driver errors are
// wrapped with what was being done: unique violations become
// store.ErrConflict; foreign-key violations and ids that cannot name a row
// (not a UUID where the column is one) become store.ErrNotFound.
//
// Values are stored the way the model holds them: times in UTC with
// millisecond precision (a zero CreatedAt or UpdatedAt is filled with
// model.Now(), and an empty ID with a new one, both written back to the
// caller's struct); documents (agent config, tool schema, CIDR lists) as
// JSON; sealed secrets as bytes, where nil and empty are both NULL and read
// back as nil. Lists without a page size return every row.
//
// In a write transaction, queries that claim rows (LockOrg, the queue, lease
// and outbox scans) lock them until it ends: on PostgreSQL with FOR NO KEY
// UPDATE, and SKIP LOCKED where concurrent workers should take different
// rows; SQLite's single writer needs no lock. In View they lock nothing.
//
// A lookup's ErrNotFound leaves the transaction usable. Any other error (a
// conflict, a dangling reference, a driver error) has aborted the transaction
// on PostgreSQL, so fn should return it rather than carry on. Update must not
// be nested inside Update: SQLite's single writer connection would wait for
// itself forever.
package sqlstore
