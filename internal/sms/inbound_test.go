package sms

import (
	"context"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
)

// blindStore hides recorded messages from MessageByProviderID inside
// writes: what a retry racing the first delivery sees on PostgreSQL, where
// both read before either writes (SQLite serializes writes, so the race
// cannot happen there without help).
type blindStore struct{ store.Store }

func (b blindStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return b.Store.Update(ctx, func(tx store.Tx) error { return fn(blindTx{tx}) })
}

type blindTx struct{ store.Tx }

func (blindTx) MessageByProviderID(context.Context, string, string) (model.Message, error) {
	return model.Message{}, store.ErrNotFound
}

// A retry that passed the duplicate check is stopped by the store's
// constraint and answered with the first record, not an error.
func TestReceiveRacingRetry(t *testing.T) {
	ctx := t.Context()
	st := sqlitetest.Open(t)
	org := model.Organization{Name: "o"}
	conn := model.MessagingConnection{Provider: ProviderTwilio, BaseURL: DefaultBaseURL, AccountSID: "AC", AuthToken: []byte("x")}
	err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateOrg(ctx, &org); err != nil {
			return err
		}
		conn.OrgID = org.ID
		return tx.CreateMessagingConnection(ctx, &conn)
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &Messages{Store: blindStore{st}}
	defer s.Close()
	in := Inbound{MessageSID: "SM1", From: "+14155550199", To: "+14155550100", Body: "hi"}
	first, err := s.Receive(ctx, org.ID, conn.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Receive(ctx, org.ID, conn.ID, in)
	if err != nil || again.ID != first.ID {
		t.Fatalf("the retry: %v, %v (first %s)", again.ID, err, first.ID)
	}
}
