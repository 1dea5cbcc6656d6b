// Package migrations owns Parley's database schema: the goose SQL migrations
// for each engine, embedded in the binary. SQLite and PostgreSQL get separate
// directories because their types differ (TEXT timestamps and STRICT tables
// against timestamptz, uuid and jsonb), but the two must describe the same
// tables, columns and rules; storetest checks that they behave alike.
//
// Migrations are append-only: once released, a file is never edited; a change
// is a new numbered file in both directories. The engine packages (store/sqlite,
// store/postgres) apply them with goose's Provider API on Open and in Migrate.
package migrations
