package web

import (
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
	unlock := sqlitetest.LockWrites(t, sqlitetest.File(t, st.DB()))

	p := b.post("/signout", nil) // deletes the session: a write
	wantStatus(t, p, http.StatusServiceUnavailable)
	if got := p.header.Get("Retry-After"); got != retryAfterUnavailable {
		t.Errorf("Retry-After %q, want %q", got, retryAfterUnavailable)
	}
	if !strings.Contains(p.body, "database is unavailable") {
		t.Errorf("the page does not say the database is unavailable:\n%s", p.body)
	}

	unlock()
	wantStatus(t, b.post("/signout", nil), http.StatusSeeOther)
}
