package web

import (
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/store/sqlite"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// A write the database cannot take (SQLite locked by another process past
// the busy timeout) answers a 503 page with Retry-After, not a 500; once
// the lock is gone the same form works.
func TestDatabaseUnavailablePage(t *testing.T) {
	st := sqlitetest.Open(t, sqlite.WithBusyTimeout(20*time.Millisecond))
	e := newEnvOn(t, st)
	b, _ := e.signedIn("acme", "ann@example.com")
	var path string
	if err := st.DB().QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	holder, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(t.Context(), "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}

	p := b.post("/signout", nil) // deletes the session: a write
	wantStatus(t, p, http.StatusServiceUnavailable)
	if got := p.header.Get("Retry-After"); got != retryAfterUnavailable {
		t.Errorf("Retry-After %q, want %q", got, retryAfterUnavailable)
	}
	if !strings.Contains(p.body, "database is unavailable") {
		t.Errorf("the page does not say the database is unavailable:\n%s", p.body)
	}

	if _, err := holder.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, b.post("/signout", nil), http.StatusSeeOther)
}
