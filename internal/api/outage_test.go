package api

import (
	"context"
	"github.com/parley-voice/parley/internal/store/sqlstore"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// A real PostgreSQL outage (the database refuses connections, its
// backends terminated): every request answers 503 unavailable with
// Retry-After (the key's lookup fails first), the probes 503; once the
// database is back the API answers again, the refused create left
// nothing, and its retry with the same Idempotency-Key creates the call.
func TestPostgresOutage(t *testing.T) {
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but PARLEY_TEST_DATABASE_URL is unset")
		}
		t.Skip("PARLEY_TEST_DATABASE_URL is not set")
	}
	db := pgtest.NewDatabase(t, url)
	e := newEnv(t, onStore(func(t testing.TB) store.Store {
		st, err := postgres.Open(context.Background(), db.URL, postgres.WithMaxConns(4))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}))
	a := e.createAgent(nil)
	body := callBody(a["id"], "+14155550101", nil)
	key := http.Header{"Idempotency-Key": {"outage"}}

	db.Refuse(t)
	wantUnavailable(t, "a read", e.do("GET", "/v1/calls", nil))
	wantUnavailable(t, "a create", e.requestWith("POST", "/v1/calls", body, e.key, key))
	if r := e.request("GET", "/healthz", nil, ""); r.Status != http.StatusServiceUnavailable {
		t.Errorf("healthz in the outage = %d %s", r.Status, r.Body)
	}
	if r := e.request("GET", "/readyz", nil, ""); r.Status != http.StatusServiceUnavailable || r.JSON(t)["status"] != "unavailable" {
		t.Errorf("readyz in the outage = %d %s", r.Status, r.Body)
	}

	db.Accept(t)
	calls := awaitOK(t, e, "/v1/calls")
	if n := len(calls.List(t)); n != 0 {
		t.Fatalf("the refused create left %d calls", n)
	}
	if r := e.requestWith("POST", "/v1/calls", body, e.key, key); r.Status != http.StatusCreated || r.Header.Get(replayedHeader) != "" {
		t.Fatalf("the retry after the outage = %d (replayed %q): %s", r.Status, r.Header.Get(replayedHeader), r.Body)
	}
	for _, probe := range []string{"/healthz", "/readyz"} {
		if r := e.request("GET", probe, nil, ""); r.Status != http.StatusOK {
			t.Errorf("%s after the outage = %d %s", probe, r.Status, r.Body)
		}
	}
}

// awaitOK sends GET path until it answers 200 (a pool may first try the
// connections the outage cut) and returns that answer; each other answer
// must be 503 unavailable.
func awaitOK(t *testing.T, e *env, path string) response {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.do("GET", path, nil)
		if r.Status == http.StatusOK {
			return r
		}
		wantUnavailable(t, "a read as the database comes back", r)
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: no 200 within 30 s of the database's return", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SQLite locked by another process past the busy timeout (SQLITE_BUSY): a
// create answers 503 unavailable with Retry-After and stores nothing;
// reads go on (WAL); once the lock is gone the create succeeds.
func TestSQLiteBusy(t *testing.T) {
	var st *sqlstore.Store
	e := newEnv(t, onStore(func(t testing.TB) store.Store {
		st = sqlitetest.Open(t, sqlite.WithBusyTimeout(20*time.Millisecond))
		return st
	}))
	e.createAgent(map[string]any{"name": "Before"})
	unlock := sqlitetest.LockWrites(t, sqlitetest.File(t, st.DB()))

	agent := map[string]any{"name": "During", "promptTemplate": "p"}
	wantUnavailable(t, "a create while locked", e.do("POST", "/v1/agents", agent))
	if n := len(e.must(http.StatusOK, "GET", "/v1/agents", nil).List(t)); n != 1 {
		t.Errorf("a read while locked: %d agents, want 1", n)
	}

	unlock()
	if n := len(e.must(http.StatusOK, "GET", "/v1/agents", nil).List(t)); n != 1 {
		t.Fatalf("the refused create left %d agents, want 1", n)
	}
	e.must(http.StatusCreated, "POST", "/v1/agents", agent)
}
