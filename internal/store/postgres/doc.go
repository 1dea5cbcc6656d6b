// Package postgres opens Parley on PostgreSQL (15 or later: the schema uses
// ON DELETE SET NULL (column)) through pgx's database/sql adapter, so the
// shared queries of store/sqlstore run unchanged, with the migrations of
// store/migrations/postgres.
//
// One pool serves both Update and View; View transactions are READ ONLY and
// REPEATABLE READ. WithSchema (or a search_path parameter in the URL) keeps
// Parley's tables in their own schema, which is how the tests isolate each
// run. Migrations hold a session advisory lock keyed by the schema, so two
// processes starting together apply them once, while different schemas never
// wait on each other.
package postgres
