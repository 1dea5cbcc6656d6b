// Package storetest is the one test suite every store.Store implementation
// must pass, in the manner of riverqueue/river's driver tests: an engine's
// test calls Run with a function that opens a fresh, empty, migrated store,
// and gets the same subtests as every other engine, so behaviour cannot drift
// between SQLite and PostgreSQL.
//
// Each subtest opens its own store (and runs in parallel with the others), so
// none depends on another's rows. The suite covers every Tx method: round
// trips, tenant scoping (another organization's ids answer ErrNotFound),
// uniqueness (ErrConflict), what deleting a row does to the rows that point at
// it, list filters, sorts and paging, and the transaction rules (rollback on
// error or panic, View cannot write, concurrent Updates all succeed).
package storetest
