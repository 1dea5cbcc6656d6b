package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/agent"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// newMessage stores a text message of the agent, changed by mods.
func (e *env) newMessage(a agent.View, body string, mods ...func(*model.Message)) model.Message {
	e.t.Helper()
	now := time.Now().UTC()
	m := model.Message{
		OrgID: a.OrgID, AgentID: &a.ID, AgentName: &a.Name, ConversationID: "conv-" + a.ID, Channel: model.ChannelSMS,
		Direction: model.Outbound, FromNumber: "+15550001000", ToNumber: "+15550002000", Body: body,
		Status: model.MessageSent, CreatedAt: now, UpdatedAt: now,
	}
	for _, mod := range mods {
		mod(&m)
	}
	ctx := context.Background()
	if err := e.st.Update(ctx, func(tx store.Tx) error { return tx.CreateMessage(ctx, &m) }); err != nil {
		e.t.Fatal(err)
	}
	return m
}

func TestMessageListFilters(t *testing.T) {
	e := newEnv(t)
	b, u := e.signedIn("acme", "ada@example.com")
	luigi, mario := e.newAgentIn(u.OrgID, "Luigi"), e.newAgentIn(u.OrgID, "Mario")
	c := e.newCall(luigi, model.CallCompleted)
	e.newMessage(luigi, "Your table is booked.", func(m *model.Message) { m.CallID = &c.ID })
	e.newMessage(mario, "Can I change my order?", func(m *model.Message) {
		m.Direction, m.Status = model.Inbound, model.MessageReceived
	})
	e.newMessage(mario, "Sorry, that failed.", func(m *model.Message) { m.Status = model.MessageFailed })

	wantContains(t, b.get("/messages"), "3 messages", "Your table is booked.", "Can I change my order?", "Sorry, that failed.")
	for _, c := range []struct {
		query, want string
		not         []string
	}{
		{"direction=INBOUND", "Can I change my order?", []string{"Your table is booked.", "Sorry, that failed."}},
		{"status=failed", "Sorry, that failed.", []string{"Your table is booked.", "Can I change my order?"}},
		{"agentId=" + luigi.ID, "Your table is booked.", []string{"Can I change my order?"}},
		{"callId=" + c.ID, "Your table is booked.", []string{"Can I change my order?", "Sorry, that failed."}},
		{"pageSize=1&sortDir=asc", "Page 1 of 3", nil},
	} {
		p := b.get("/messages?" + c.query)
		wantStatus(t, p, http.StatusOK)
		results := p.body[strings.Index(p.body, `id="results"`):]
		if !contains(results, c.want) {
			t.Errorf("%s: lacks %q", c.query, c.want)
		}
		for _, n := range c.not {
			if contains(results, n) {
				t.Errorf("%s: lists %q", c.query, n)
			}
		}
	}
	for _, q := range []string{"status=read", "direction=up", "callId=x", "agentId=x", "folderId=x", "page=0", "sortDir=up"} {
		p := b.get("/messages?" + q)
		if p.status != http.StatusBadRequest || !contains(p.body, `role="alert"`) {
			t.Errorf("%s: %d, want 400 with the problem", q, p.status)
		}
	}
	// The call's page links to its messages.
	wantContains(t, b.get("/calls/"+c.ID), `href="/messages?callId=`+c.ID+`"`)
}
