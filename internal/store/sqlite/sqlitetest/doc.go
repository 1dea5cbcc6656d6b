// Package sqlitetest gives tests a fresh, migrated SQLite store without
// migrating each time: the migrations run once per test process into a
// template database, and every store after that opens a byte copy of it.
// Under the race detector a migration costs most of a second of CPU in
// modernc.org/sqlite's parser; a copy costs a file write.
//
// A test that is about migrating (an upgrade over old rows, a migration's
// down and up) opens its database with sqlite.Open, which migrates.
package sqlitetest
