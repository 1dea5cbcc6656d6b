package sms

import (
	"fmt"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// TestSettleSurvivesFaults: the record that an inbound text was dealt with
// (here: not answered, its agent disabled), refused a few times by the
// database (busy, a full disk), lands once it takes it: nothing is owed
// any more and the message says why it was not answered.
func TestSettleSurvivesFaults(t *testing.T) {
	for i, err := range []error{storefault.Busy, storefault.DiskFull} {
		t.Run(fmt.Sprint(err), func(t *testing.T) {
			ctx := t.Context()
			fs := storefault.Wrap(sqlitetest.Open(t))
			now := model.Now()
			org := model.Organization{ID: model.NewID(), Name: "o", ConcurrencyLimit: 1, CreatedAt: now, UpdatedAt: now}
			conn := model.MessagingConnection{Provider: ProviderTwilio, BaseURL: DefaultBaseURL, AccountSID: "AC", AuthToken: []byte("x")}
			agent := model.Agent{ID: model.NewID(), Name: "Front desk", Status: model.AgentDisabled, Mode: model.ModeSinglePrompt, CreatedAt: now, UpdatedAt: now}
			number := "+14155550100"
			if err := fs.Update(ctx, func(tx store.Tx) error {
				if err := tx.CreateOrg(ctx, &org); err != nil {
					return err
				}
				conn.OrgID, agent.OrgID = org.ID, org.ID
				if err := tx.CreateMessagingConnection(ctx, &conn); err != nil {
					return err
				}
				if err := tx.CreateAgent(ctx, &agent); err != nil {
					return err
				}
				return tx.CreatePhoneNumber(ctx, &model.PhoneNumber{ID: model.NewID(), OrgID: org.ID, E164: number, AgentID: &agent.ID,
					CreatedAt: now, UpdatedAt: now})
			}); err != nil {
				t.Fatal(err)
			}
			s := &Messages{Store: fs}
			defer s.Close()
			fs.Inject(storefault.Rule{Op: "UpdateMessage", Times: 2 + i, Err: err})
			m, err := s.Receive(ctx, org.ID, conn.ID, Inbound{MessageSID: "SM1", From: "+14155550199", To: number, Body: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if m.ReplyDueAt == nil {
				t.Fatal("the text owes no reply")
			}
			s.Wait()
			got, err := store.Read(ctx, fs, func(tx store.Tx) (model.Message, error) { return tx.GetMessage(ctx, org.ID, m.ID) })
			if err != nil {
				t.Fatal(err)
			}
			if got.ReplyDueAt != nil || got.ErrorMessage == nil || *got.ErrorMessage != "not answered: the agent is disabled" {
				t.Errorf("after the refused writes: reply due %v, error %v", got.ReplyDueAt, got.ErrorMessage)
			}
			if n := fs.Fails("UpdateMessage"); n != 2+i {
				t.Errorf("the fault struck %d times, want %d", n, 2+i)
			}
		})
	}
}
