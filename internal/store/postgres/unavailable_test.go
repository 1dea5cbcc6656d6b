package postgres_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/postgres"
	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
)

// lookUp reads an organization by name: a transaction that needs the
// database.
func lookUp(ctx context.Context, s store.Store, name string) error {
	return s.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetOrgByName(ctx, name)
		return err
	})
}

// wantUnavailable fails t unless err is ErrUnavailable carrying the
// driver's text (one of texts).
func wantUnavailable(t *testing.T, what string, err error, texts ...string) {
	t.Helper()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("%s: %v, want ErrUnavailable", what, err)
	}
	t.Logf("%s: %v", what, err)
	for _, text := range texts {
		if strings.Contains(err.Error(), text) {
			return
		}
	}
	t.Errorf("%s: %q carries none of the driver's texts %q", what, err, texts)
}

// A server that went away (its port closed, the connections cut) is
// unavailable: the pooled connection's failure and then the refused
// connection, for a transaction and for Ping.
func TestClosedPortIsUnavailable(t *testing.T) {
	dbURL := databaseURL(t)
	p := startProxy(t, dbURL)
	s := open(t, p.url(t, dbURL), postgres.WithMaxConns(1))
	ctx := t.Context()
	if err := lookUp(ctx, s, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("through the proxy: %v", err)
	}
	p.stop()
	defer p.restart(t) // for the schema's drop
	// The pool's cut connection, then a refused one.
	for range 2 {
		wantUnavailable(t, "read with the server gone", lookUp(ctx, s, "nobody"),
			"refused", "EOF", "closed", "reset", "broken pipe")
	}
	wantUnavailable(t, "ping with the server gone", s.Ping(ctx), "refused", "EOF", "closed", "reset")
}

// A database that lets nobody in (CONNECTION LIMIT 0, its backends
// terminated) is unavailable, too many connections (53300) once the pool's
// connection is gone; let in again, the same read succeeds.
func TestConnectionLimitIsUnavailable(t *testing.T) {
	db := pgtest.NewDatabase(t, databaseURL(t))
	s, err := postgres.Open(t.Context(), db.URL, postgres.WithMaxConns(2))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := lookUp(ctx, s, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	db.Refuse(t)
	sawLimit := false
	for range 5 { // the pool's dead connections first, then new ones refused
		err := lookUp(ctx, s, "nobody")
		wantUnavailable(t, "read while refused", err, "SQLSTATE 53300", "SQLSTATE 57P01", "EOF", "closed", "reset")
		if strings.Contains(err.Error(), "53300") {
			sawLimit = true
			break
		}
	}
	if !sawLimit {
		t.Error("no read was refused for too many connections (53300)")
	}
	db.Accept(t)
	if err := lookUp(ctx, s, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("read once let in again: %v", err)
	}
}

// The store's connection terminated inside a transaction
// (pg_terminate_backend: 57P01, or the connection's end) is unavailable.
func TestTerminatedBackendIsUnavailable(t *testing.T) {
	db := pgtest.NewDatabase(t, databaseURL(t))
	s, err := postgres.Open(t.Context(), db.URL, postgres.WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	var pid int // the pool's one connection
	if err := s.DB().QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &model.Organization{Name: "before", ConcurrencyLimit: 1}); err != nil {
			return err
		}
		db.TerminateBackend(t, pid)
		return tx.CreateOrg(ctx, &model.Organization{Name: "after", ConcurrencyLimit: 1})
	})
	wantUnavailable(t, "write on a terminated connection", err, "SQLSTATE 57P01", "EOF", "closed", "reset")
	for _, name := range []string{"before", "after"} {
		if err := lookUp(ctx, s, name); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%q after the failed transaction: %v, want not found", name, err)
		}
	}
}

// Failures of the work itself, and a caller's cancellation, are not
// unavailability.
func TestConflictIsNotUnavailable(t *testing.T) {
	s := open(t, databaseURL(t))
	ctx := t.Context()
	create := func() error {
		return s.Update(ctx, func(tx store.Tx) error {
			return tx.CreateOrg(ctx, &model.Organization{Name: "twice", ConcurrencyLimit: 1})
		})
	}
	if err := create(); err != nil {
		t.Fatal(err)
	}
	if err := create(); !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("duplicate name: %v, want ErrConflict alone", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := lookUp(canceled, s, "twice"); err == nil || errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("canceled read: %v, want an error other than ErrUnavailable", err)
	}
}

// proxy relays TCP connections to the database server, until stopped: a
// server that can be taken off the network.
type proxy struct {
	target string
	mu     sync.Mutex
	ln     net.Listener
	addr   string
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, dbURL string) *proxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: u.Host, conns: map[net.Conn]bool{}}
	p.listen(t, "127.0.0.1:0")
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) listen(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() { p.accept(ln) })
}

// url is dbURL through the proxy.
func (p *proxy) url(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

func (p *proxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		relay := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { relay(up, c) })
		p.wg.Go(func() { relay(c, up) })
	}
}

// stop closes the port and cuts every relayed connection.
func (p *proxy) stop() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// restart opens the same port again.
func (p *proxy) restart(t *testing.T) {
	t.Helper()
	p.listen(t, p.addr)
}
