package storetest

import (
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

func getMessagingConnection(t *testing.T, b *bundle, orgID, id string) model.MessagingConnection {
	t.Helper()
	return read(t, b, func(tx store.Tx) (model.MessagingConnection, error) {
		return tx.GetMessagingConnection(b.ctx, orgID, id)
	})
}

var messagingConnectionTests = []test{
	{"CreateGetDelete", func(t *testing.T, b *bundle) {
		c := newMessagingConnection(t, b, b.org.ID, func(c *model.MessagingConnection) {
			c.Name = ptr("Main line")
			c.FromNumber = nil
			c.MessagingServiceSID = ptr("MG123")
		})
		if !strings.HasPrefix(c.ID, "mc_") {
			t.Fatalf("id = %q, want an mc_ id", c.ID)
		}
		wantEqual(t, c, getMessagingConnection(t, b, b.org.ID, c.ID))
		b.update(t, func(tx store.Tx) error { return tx.DeleteMessagingConnection(b.ctx, b.org.ID, c.ID) })
		wantIs(t, readErr(b, func(tx store.Tx) (model.MessagingConnection, error) {
			return tx.GetMessagingConnection(b.ctx, b.org.ID, c.ID)
		}), store.ErrNotFound)
	}},
	{"Update", func(t *testing.T, b *bundle) {
		c := newMessagingConnection(t, b, b.org.ID)
		c.Name, c.BaseURL, c.AccountSID, c.AuthToken = ptr("Renamed"), "https://sms.example.com", "AC999", []byte("new-sealed")
		c.FromNumber, c.MessagingServiceSID, c.UpdatedAt = nil, ptr("MG9"), at(5)
		b.update(t, func(tx store.Tx) error { return tx.UpdateMessagingConnection(b.ctx, &c) })
		wantEqual(t, c, getMessagingConnection(t, b, b.org.ID, c.ID))
		// Another organization's connection is not found, and stays as it was.
		theirs := newMessagingConnection(t, b, b.other.ID)
		hijack := theirs
		hijack.OrgID, hijack.AccountSID = b.org.ID, "ACstolen"
		wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.UpdateMessagingConnection(b.ctx, &hijack) }), store.ErrNotFound)
		wantEqual(t, theirs, getMessagingConnection(t, b, b.other.ID, theirs.ID))
	}},
	{"AuthTokenNilAndEmpty", func(t *testing.T, b *bundle) {
		c := newMessagingConnection(t, b, b.org.ID, func(c *model.MessagingConnection) { c.AuthToken = []byte{} })
		if got := getMessagingConnection(t, b, b.org.ID, c.ID); got.AuthToken != nil {
			t.Fatalf("auth token = %#v, want nil", got.AuthToken)
		}
	}},
	{"Scoped", func(t *testing.T, b *bundle) {
		c := newMessagingConnection(t, b, b.org.ID)
		for _, k := range []struct{ org, id string }{
			{b.other.ID, c.ID}, {b.org.ID, "mc_missing"}, {b.org.ID, model.NewID()},
		} {
			wantIs(t, readErr(b, func(tx store.Tx) (model.MessagingConnection, error) {
				return tx.GetMessagingConnection(b.ctx, k.org, k.id)
			}), store.ErrNotFound)
			wantIs(t, b.writeErr(func(tx store.Tx) error { return tx.DeleteMessagingConnection(b.ctx, k.org, k.id) }), store.ErrNotFound)
		}
		wantEqual(t, c, getMessagingConnection(t, b, b.org.ID, c.ID))
	}},
	{"List", func(t *testing.T, b *bundle) {
		var rows []created
		for _, sec := range []int{6, 6, 6, 2} {
			c := newMessagingConnection(t, b, b.org.ID, func(c *model.MessagingConnection) { c.CreatedAt = at(sec) })
			rows = append(rows, created{c.ID, c.CreatedAt})
		}
		newMessagingConnection(t, b, b.other.ID)
		checkPaging(t, oldestFirst(rows), func(p store.Page) ([]string, int) {
			var total int
			got := read(t, b, func(tx store.Tx) ([]model.MessagingConnection, error) {
				rows, n, err := tx.ListMessagingConnections(b.ctx, b.org.ID, p)
				total = n
				return rows, err
			})
			return ids(got, func(c model.MessagingConnection) string { return c.ID }), total
		})
	}},
}
