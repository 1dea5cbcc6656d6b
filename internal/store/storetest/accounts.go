package storetest

import (
	"fmt"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func newUser(t *testing.T, b *bundle, orgID, email string) model.User {
	t.Helper()
	u := model.User{OrgID: orgID, Email: email, PasswordHash: "$argon2id$stub", MustChangePassword: true, CreatedAt: at(0), UpdatedAt: at(0)}
	b.update(t, func(tx store.Tx) error { return tx.CreateUser(b.ctx, &u) })
	return u
}

func newSession(t *testing.T, b *bundle, u model.User, expires int) model.Session {
	t.Helper()
	s := model.Session{OrgID: u.OrgID, UserID: u.ID, Hash: []byte(model.NewID()), CSRFToken: "csrf-" + model.NewID(), CreatedAt: at(0), ExpiresAt: at(expires)}
	b.update(t, func(tx store.Tx) error { return tx.CreateSession(b.ctx, &s) })
	return s
}

var userTests = []test{
	{"CreateGet", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		wantEqual(t, u, read(t, b, func(tx store.Tx) (model.User, error) { return tx.GetUser(b.ctx, b.org.ID, u.ID) }))
		wantEqual(t, u, read(t, b, func(tx store.Tx) (model.User, error) { return tx.GetUserByEmail(b.ctx, "ada@example.com") }))
		wantIs(t, readErr(b, func(tx store.Tx) (model.User, error) { return tx.GetUser(b.ctx, b.other.ID, u.ID) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.User, error) { return tx.GetUser(b.ctx, b.org.ID, "not-a-uuid") }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.User, error) { return tx.GetUserByEmail(b.ctx, "bob@example.com") }), store.ErrNotFound)
	}},
	{"EmailUniqueAcrossOrgs", func(t *testing.T, b *bundle) {
		newUser(t, b, b.org.ID, "ada@example.com")
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.CreateUser(b.ctx, &model.User{OrgID: b.other.ID, Email: "ada@example.com", PasswordHash: "h"})
		}), store.ErrConflict)
	}},
	{"UnknownOrg", func(t *testing.T, b *bundle) {
		wantIs(t, b.writeErr(func(tx store.Tx) error {
			return tx.CreateUser(b.ctx, &model.User{OrgID: model.NewID(), Email: "x@example.com", PasswordHash: "h"})
		}), store.ErrNotFound)
	}},
	{"SetPasswordScoped", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.SetUserPassword(b.ctx, b.other.ID, u.ID, "other", false) }), store.ErrNotFound)
		b.update(t, func(tx store.Tx) error { return tx.SetUserPassword(b.ctx, b.org.ID, u.ID, "new-hash", false) })
		got := read(t, b, func(tx store.Tx) (model.User, error) { return tx.GetUser(b.ctx, b.org.ID, u.ID) })
		if got.PasswordHash != "new-hash" || got.MustChangePassword || !got.UpdatedAt.After(u.UpdatedAt) {
			t.Fatalf("after setting the password: %+v", got)
		}
	}},
	{"List", func(t *testing.T, b *bundle) {
		var rows []created
		for i, sec := range []int{6, 6, 6, 2} {
			u := model.User{OrgID: b.org.ID, Email: fmt.Sprintf("u%d@example.com", i), PasswordHash: "h", CreatedAt: at(sec), UpdatedAt: at(sec)}
			b.update(t, func(tx store.Tx) error { return tx.CreateUser(b.ctx, &u) })
			rows = append(rows, created{u.ID, u.CreatedAt})
		}
		newUser(t, b, b.other.ID, "other@example.com")
		checkPaging(t, oldestFirst(rows), func(p store.Page) ([]string, int) {
			var total int
			got := read(t, b, func(tx store.Tx) ([]model.User, error) {
				rows, n, err := tx.ListUsers(b.ctx, b.org.ID, p)
				total = n
				return rows, err
			})
			return ids(got, func(u model.User) string { return u.ID }), total
		})
	}},
	{"DeleteEndsSessions", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		kept := newUser(t, b, b.org.ID, "bob@example.com")
		s, keptSession := newSession(t, b, u, 60), newSession(t, b, kept, 60)
		// Another organization's id, or a malformed one, deletes nothing.
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteUser(b.ctx, b.other.ID, u.ID) }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteUser(b.ctx, b.org.ID, "not-a-uuid") }), store.ErrNotFound)
		b.update(t, func(tx store.Tx) error { return tx.DeleteUser(b.ctx, b.org.ID, u.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.User, error) { return tx.GetUser(b.ctx, b.org.ID, u.ID) }), store.ErrNotFound)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Session, error) { return tx.GetSessionByHash(b.ctx, s.Hash) }), store.ErrNotFound)
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteUser(b.ctx, b.org.ID, u.ID) }), store.ErrNotFound)
		wantEqual(t, keptSession, read(t, b, func(tx store.Tx) (model.Session, error) { return tx.GetSessionByHash(b.ctx, keptSession.Hash) }))
		// The email is free again.
		newUser(t, b, b.other.ID, "ada@example.com")
	}},
	{"Count", func(t *testing.T, b *bundle) {
		wantEqual(t, 0, read(t, b, func(tx store.Tx) (int, error) { return tx.CountUsers(b.ctx) }))
		newUser(t, b, b.org.ID, "a@example.com")
		newUser(t, b, b.other.ID, "b@example.com")
		wantEqual(t, 2, read(t, b, func(tx store.Tx) (int, error) { return tx.CountUsers(b.ctx) }))
	}},
}

var sessionTests = []test{
	{"CreateGetDelete", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		s := newSession(t, b, u, 60)
		get := func() (model.Session, error) {
			var got model.Session
			err := b.view(func(tx store.Tx) (err error) { got, err = tx.GetSessionByHash(b.ctx, s.Hash); return err })
			return got, err
		}
		got, err := get()
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, s, got)
		b.update(t, func(tx store.Tx) error { return tx.DeleteSession(b.ctx, s.Hash) })
		_, err = get()
		wantIs(t, err, store.ErrNotFound)
		// Deleting it again is not an error.
		b.update(t, func(tx store.Tx) error { return tx.DeleteSession(b.ctx, s.Hash) })
	}},
	{"UserMustBeTheOrgs", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		for _, s := range []model.Session{
			{OrgID: b.other.ID, UserID: u.ID, Hash: []byte("h1"), CSRFToken: "c", ExpiresAt: at(60)},
			{OrgID: b.org.ID, UserID: model.NewID(), Hash: []byte("h2"), CSRFToken: "c", ExpiresAt: at(60)},
		} {
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.CreateSession(b.ctx, &s) }), store.ErrNotFound)
		}
	}},
	{"DeleteUserSessions", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		v := newUser(t, b, b.org.ID, "bob@example.com")
		s1, s2, kept := newSession(t, b, u, 60), newSession(t, b, u, 60), newSession(t, b, v, 60)
		// Another organization's id deletes nothing.
		b.update(t, func(tx store.Tx) error { return tx.DeleteUserSessions(b.ctx, b.other.ID, u.ID) })
		b.update(t, func(tx store.Tx) error { return tx.DeleteUserSessions(b.ctx, b.org.ID, u.ID) })
		for _, s := range []model.Session{s1, s2} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.Session, error) { return tx.GetSessionByHash(b.ctx, s.Hash) }), store.ErrNotFound)
		}
		wantEqual(t, kept, read(t, b, func(tx store.Tx) (model.Session, error) { return tx.GetSessionByHash(b.ctx, kept.Hash) }))
	}},
	{"DeleteExpired", func(t *testing.T, b *bundle) {
		u := newUser(t, b, b.org.ID, "ada@example.com")
		old, live := newSession(t, b, u, 10), newSession(t, b, u, 100)
		var n int
		b.update(t, func(tx store.Tx) (err error) { n, err = tx.DeleteExpiredSessions(b.ctx, at(50)); return err })
		wantEqual(t, 1, n)
		wantIs(t, readErr(b, func(tx store.Tx) (model.Session, error) { return tx.GetSessionByHash(b.ctx, old.Hash) }), store.ErrNotFound)
		wantEqual(t, live, read(t, b, func(tx store.Tx) (model.Session, error) { return tx.GetSessionByHash(b.ctx, live.Hash) }))
	}},
}
