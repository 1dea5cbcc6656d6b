package pipeline

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/store"
)

// textCarrier records what it was asked to send.
type textCarrier struct {
	mu   sync.Mutex
	sent []twilio.Send
}

func (c *textCarrier) Send(_ context.Context, s twilio.Send) (twilio.Sent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, s)
	return twilio.Sent{SID: "SM" + strings.Repeat("1", 32), Status: "queued"}, nil
}

func TestSendMessageTool(t *testing.T) {
	t.Parallel()
	requireSpeech(t)
	key := make([]byte, secret.KeySize)
	rand.Read(key)
	box, _ := secret.NewBox(key)
	yes, from := true, "+15550003333"
	b := newBench(t, func(a *model.Agent) {
		a.Config.MessagingConfig = &model.MessagingConfig{SendMessageEnabled: &yes, FromNumber: &from}
	})
	ctx := context.Background()
	conn := model.MessagingConnection{ID: model.NewPrefixedID("mc"), OrgID: b.agent.OrgID, Provider: "twilio", BaseURL: "https://api.twilio.com",
		AccountSID: "AC1", AuthToken: box.Seal("token"), CreatedAt: model.Now(), UpdatedAt: model.Now()}
	err := b.st.Update(ctx, func(tx store.Tx) error {
		if err := tx.CreateMessagingConnection(ctx, &conn); err != nil {
			return err
		}
		a, err := tx.GetAgent(ctx, b.agent.OrgID, b.agent.ID)
		if err != nil {
			return err
		}
		a.MessagingConnectionID = &conn.ID
		return tx.UpdateAgent(ctx, &a)
	})
	if err != nil {
		t.Fatal(err)
	}
	carrier := &textCarrier{}
	msgs := &sms.Messages{Store: b.st, Box: box, Carrier: func(model.MessagingConnection, string) (sms.Carrier, error) { return carrier, nil }}
	entry, result := toolTurn(t, b, &Engine{Messages: msgs}, "send_message", `{"body":"Luigi's, 12 Harbour Street."}`)
	if str(entry["tool"]) != `map[args:{"body":"Luigi's, 12 Harbour Street."} name:send_message]` || result != "sent to "+b.call.FromNumber {
		t.Errorf("entry %v, result %q", entry, result)
	}
	carrier.mu.Lock()
	defer carrier.mu.Unlock()
	if len(carrier.sent) != 1 || carrier.sent[0].To != b.call.FromNumber || carrier.sent[0].From != from || carrier.sent[0].Body != "Luigi's, 12 Harbour Street." {
		t.Fatalf("carrier sent %+v", carrier.sent)
	}
	list, _, err := msgs.List(ctx, b.agent.OrgID, store.MessageFilter{Page: store.Page{Number: 1, Size: 10}, CallID: b.call.ID})
	if err != nil || len(list) != 1 || list[0].Status != model.MessageSent || list[0].AgentID == nil || *list[0].AgentID != b.agent.ID {
		t.Errorf("the message of the call: %+v %v", list, err)
	}
}
