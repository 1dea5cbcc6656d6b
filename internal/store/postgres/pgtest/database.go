// Package pgtest gives tests a PostgreSQL database of their own, owned by
// a role of their own, that they can take away and give back: the outage
// of a real server, seen by a real driver.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Database is a database created for one test, and its owner: a role that
// is not a superuser, so that the database's CONNECTION LIMIT applies to
// it. Both are dropped when the test ends.
type Database struct {
	// URL connects to the database as its owner.
	URL string
	// Name is the database's (and its owner's) name.
	Name  string
	admin string
}

// NewDatabase creates a database and its owner on the server adminURL
// (a superuser's URL) names.
func NewDatabase(t testing.TB, adminURL string) *Database {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	d := &Database{Name: "parley_outage_" + hex.EncodeToString(b), admin: adminURL}
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatalf("pgtest: admin URL: %v", err)
	}
	u.User, u.Path = url.User(d.Name), "/"+d.Name
	d.URL = u.String()
	id := pgx.Identifier{d.Name}.Sanitize()
	d.exec(t, "CREATE ROLE "+id+" LOGIN")
	t.Cleanup(func() {
		if err := d.run("DROP DATABASE IF EXISTS " + id + " WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
		if err := d.run("DROP ROLE IF EXISTS " + id); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	d.exec(t, "CREATE DATABASE "+id+" OWNER "+id)
	return d
}

// Refuse takes the database away: no new connection is let in (CONNECTION
// LIMIT 0), and every open one is terminated.
func (d *Database) Refuse(t testing.TB) {
	t.Helper()
	d.exec(t, "ALTER DATABASE "+pgx.Identifier{d.Name}.Sanitize()+" CONNECTION LIMIT 0")
	d.Terminate(t)
}

// Accept gives the database back: connections are let in again.
func (d *Database) Accept(t testing.TB) {
	t.Helper()
	d.exec(t, "ALTER DATABASE "+pgx.Identifier{d.Name}.Sanitize()+" CONNECTION LIMIT -1")
}

// Terminate ends every connection open to the database, and returns once
// their server processes are gone.
func (d *Database) Terminate(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.admin)
	if err != nil {
		t.Fatalf("pgtest: connect as the superuser: %v", err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM
			(SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()) t`,
			d.Name).Scan(&left)
		if err != nil {
			t.Fatalf("pgtest: terminate the connections to %s: %v", d.Name, err)
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: %d connections to %s outlived 30 s of terminating", left, d.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TerminateBackend ends the connection of the server process pid.
func (d *Database) TerminateBackend(t testing.TB, pid int) {
	t.Helper()
	d.exec(t, "SELECT pg_terminate_backend($1)", pid)
}

// exec runs one statement as the superuser, failing t if it fails.
func (d *Database) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if err := d.run(sql, args...); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// run runs one statement as the superuser, on a connection of its own (so
// that a test's context, done in its cleanups, is not needed).
func (d *Database) run(sql string, args ...any) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.admin)
	if err != nil {
		return fmt.Errorf("connect as the superuser: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}
