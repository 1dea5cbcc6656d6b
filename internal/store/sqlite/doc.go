// Package sqlite opens Parley's embedded database: SQLite through the CGO-free
// modernc.org/sqlite driver, with the shared queries of store/sqlstore and the
// migrations of store/migrations/sqlite.
//
// The database runs in WAL mode with foreign keys on, synchronous=NORMAL and a
// busy timeout, set by DSN _pragma parameters so every pooled connection gets
// them. It is opened twice: a writer pool of exactly one connection whose
// transactions BEGIN IMMEDIATE (Update: writers queue in Go instead of failing
// with SQLITE_BUSY, and never upgrade a read lock mid-transaction), and a pool
// of query_only readers (View: reads run beside the writer, and cannot write).
//
// Open(ctx, ":memory:") gives a private database in a temporary directory that
// Close removes: the same two pools and WAL as a real file, which an in-process
// memory database cannot offer.
package sqlite
