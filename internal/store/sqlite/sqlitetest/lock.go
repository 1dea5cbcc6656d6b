package sqlitetest

import (
	"context"
	"database/sql"
	"testing"
)

// File is the path of the database file db holds open.
func File(t testing.TB, db *sql.DB) string {
	t.Helper()
	var path string
	if err := db.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path); err != nil {
		t.Fatal(err)
	}
	return path
}

// LockWrites takes the write lock of the database file at path from a
// connection of its own, as another process would (BEGIN EXCLUSIVE):
// writers wait their busy timeout out and fail SQLITE_BUSY, readers in WAL
// mode go on. release lets the lock go; the test's end releases it too.
func LockWrites(t testing.TB, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	// The server may be mid-write when the lock is asked for: wait for its
	// transaction to end rather than fail at once.
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 60000"); err != nil {
		conn.Close()
		db.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		conn.Close()
		db.Close()
		t.Fatal(err)
	}
	done := false
	release = func() {
		if done {
			return
		}
		done = true
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Errorf("let the write lock go: %v", err)
		}
		conn.Close()
		db.Close()
	}
	t.Cleanup(release)
	return release
}
