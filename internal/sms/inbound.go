package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// Inbound handling limits.
const (
	// ThreadContext is how many of a thread's messages, newest, the model
	// and the inbound_message webhook see.
	ThreadContext = 50
	// InboundWebhookTimeout is how long the customer's inboundWebhookUrl
	// has to answer before the agent replies on its own.
	InboundWebhookTimeout = 5 * time.Second
	maxWebhookAnswer      = 16 << 10
	// replyLease is how long the server that takes an inbound message has
	// to answer it (webhook, model and carrier, each bounded well under
	// it) before another may take it over.
	replyLease = 2 * time.Minute
	// maxReplyAge: a text older than this, left unanswered by a server
	// that stopped, is not answered any more (a late reply confuses more
	// than it helps).
	maxReplyAge  = time.Hour
	maxNumberLen = 32 // carriers' From/To: E.164, short codes, alphanumeric senders
	maxSIDLen    = 64
)

// Inbound is a carrier's inbound-message webhook, signature already
// verified: Twilio's form fields.
type Inbound struct {
	MessageSID, From, To, Body string
}

// InboundFrom reads the carrier's form.
func InboundFrom(form interface{ Get(string) string }) Inbound {
	return Inbound{MessageSID: form.Get("MessageSid"), From: form.Get("From"), To: form.Get("To"), Body: form.Get("Body")}
}

func (in Inbound) check() error {
	var l invalid.List
	for _, f := range []struct {
		name, v string
		max     int
	}{{"MessageSid", in.MessageSID, maxSIDLen}, {"From", in.From, maxNumberLen}, {"To", in.To, maxNumberLen}} {
		if f.v == "" || len(f.v) > f.max {
			l.Add(f.name, "is required, at most %d characters", f.max)
		}
	}
	return l.Err()
}

// Receive records a message texted to one of the connection's numbers, as
// an INBOUND message (status received) of the agent that owns the number,
// in its thread with the sender. Then, after Receive has returned so the
// carrier gets its answer at once, the message is forwarded to the agent's
// inboundWebhookUrl and answered (see answer). A carrier's retry of a
// message already recorded changes nothing. A number no agent owns is
// recorded without an agent and not answered.
func (s *Messages) Receive(ctx context.Context, orgID, connID string, in Inbound) (model.Message, error) {
	if err := in.check(); err != nil {
		return model.Message{}, err
	}
	if r := []rune(in.Body); len(r) > MaxBodyLen {
		in.Body = string(r[:MaxBodyLen])
	}
	var (
		m         model.Message
		agent     *model.Agent
		duplicate bool
	)
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		conn, err := tx.GetMessagingConnection(ctx, orgID, connID)
		if err != nil {
			return err
		}
		switch known, err := tx.MessageByProviderID(ctx, orgID, in.MessageSID); {
		case err == nil: // the carrier retried
			m, duplicate = known, true
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if agent, err = numberOwner(ctx, tx, orgID, conn, in.To); err != nil {
			return err
		}
		now := model.Now()
		m = model.Message{ID: model.NewMessageID(), OrgID: orgID, MessagingConnectionID: &conn.ID, Channel: model.ChannelSMS,
			Direction: model.Inbound, FromNumber: in.From, ToNumber: in.To, Body: in.Body, Status: model.MessageReceived,
			ProviderMessageID: &in.MessageSID, CreatedAt: now, UpdatedAt: now}
		if agent != nil {
			due := now.Add(replyLease) // owed: if this server stops first, another answers
			m.AgentID, m.AgentName, m.ReplyDueAt = &agent.ID, &agent.Name, &due
		}
		m.ConversationID = s.conversation(ctx, tx, orgID, route{agent: agent}, in.From)
		switch k, kind := carrierKeyword(in.Body); kind {
		case keywordOptOut:
			if err := tx.SetOptOut(ctx, orgID, conn.ID, in.From, k, now); err != nil {
				return err
			}
		case keywordOptIn:
			if err := tx.ClearOptOut(ctx, orgID, conn.ID, in.From); err != nil {
				return err
			}
		}
		return tx.CreateMessage(ctx, &m)
	})
	if errors.Is(err, store.ErrConflict) { // a retry recorded it first, between our read and write
		return store.Read(ctx, s.Store, func(tx store.Tx) (model.Message, error) {
			return tx.MessageByProviderID(ctx, orgID, in.MessageSID)
		})
	}
	if err != nil || duplicate {
		return m, err
	}
	s.Metrics.message("inbound", model.MessageReceived)
	if agent == nil {
		return m, nil
	}
	a := *agent
	s.background(func(ctx context.Context) { s.handle(ctx, a, m) })
	return m, nil
}

// handle answers an inbound message and records that nothing is owed any
// more, with why no reply went out if none did. Stopped by a shutdown, it
// leaves the reply owed: the next sweep takes it.
func (s *Messages) handle(ctx context.Context, a model.Agent, m model.Message) {
	cause := s.answer(ctx, a, m)
	if ctx.Err() != nil {
		return
	}
	s.settle(ctx, m, cause)
}

// errTakenOver: the inboundWebhookUrl took the thread over.
var errTakenOver = errors.New("taken over by the inboundWebhookUrl")

// settle records an inbound message as dealt with: nothing owed, and
// cause (when not nil or errTakenOver) as why it was not answered. A
// record the database does not take is retried (persist): given up, the
// reply stays owed and the sweep takes it again once its lease is over
// (settling it if it was answered, answering it again if not, which
// forwards it to the inboundWebhookUrl a second time).
func (s *Messages) settle(ctx context.Context, m model.Message, cause error) {
	m.ReplyDueAt, m.UpdatedAt = nil, model.Now()
	switch {
	case errors.Is(cause, errTakenOver):
		s.Metrics.reply("taken_over")
		cause = nil
	case cause != nil:
		s.Metrics.reply("not_answered")
	default:
		s.Metrics.reply("answered")
	}
	if cause != nil {
		s.logger().Warn("inbound message not answered", "message", m.ID, "error", cause)
		msg := "not answered: " + cause.Error()
		m.ErrorMessage = &msg
	}
	err := s.Writes.Do(ctx, "inbound message settled", func(ctx context.Context) error {
		return s.Store.Update(ctx, func(tx store.Tx) error { return tx.UpdateMessage(ctx, &m) })
	})
	if err != nil {
		s.logger().Error("inbound message: not recorded as dealt with; the sweep takes it again", "message", m.ID, "error", err)
	}
}

// numberOwner is the agent a text to number reaches: the agent the phone
// number is assigned to; else the agent whose messagingConfig.fromNumber
// it is; else the one agent using the connection, when the number is the
// connection's own or it has a messaging service. nil: no agent.
func numberOwner(ctx context.Context, tx store.Tx, orgID string, conn model.MessagingConnection, number string) (*model.Agent, error) {
	if n, err := tx.GetPhoneNumberByE164(ctx, number); err == nil && n.OrgID == orgID && n.AgentID != nil {
		a, err := tx.GetAgent(ctx, orgID, *n.AgentID)
		if err == nil {
			return &a, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	var onConnection []model.Agent
	for page := 1; ; page++ {
		agents, total, err := tx.ListAgents(ctx, orgID, store.AgentFilter{Page: store.Page{Number: page, Size: 100}})
		if err != nil {
			return nil, err
		}
		for _, a := range agents {
			if mc := a.Config.MessagingConfig; mc != nil && deref(mc.FromNumber) == number {
				return &a, nil
			}
			if a.MessagingConnectionID != nil && *a.MessagingConnectionID == conn.ID {
				onConnection = append(onConnection, a)
			}
		}
		if page*100 >= total || len(agents) == 0 {
			break
		}
	}
	if len(onConnection) == 1 && (deref(conn.FromNumber) == number || deref(conn.MessagingServiceSID) != "") {
		return &onConnection[0], nil
	}
	return nil, nil
}

// InboundPayload is what the agent's inboundWebhookUrl receives (event
// inbound_message): the message, and its thread oldest first (at most
// ThreadContext messages, this one last).
type InboundPayload struct {
	Event          string   `json:"event"`
	AgentID        string   `json:"agentId"`
	ConversationID string   `json:"conversationId"`
	Message        Record   `json:"message"`
	Conversation   []Record `json:"conversation"`
}

// InboundAnswer is what the receiver may answer (2xx, JSON): autoReply
// false takes the thread over (the agent sends nothing; the customer
// replies through POST /messages when it wants), reply is sent as the
// agent's answer instead of one the model writes. Any other answer, or
// none, lets the agent reply on its own; so does one that gives a key
// twice in an object (autoReply true then false), as if it were not JSON.
type InboundAnswer struct {
	AutoReply *bool   `json:"autoReply"`
	Reply     *string `json:"reply"`
}

// answer forwards an inbound message to the agent's inboundWebhookUrl and,
// unless the receiver takes over, replies: with the receiver's text, or
// with one the model writes from the agent's SMS prompt (else its prompt)
// and the thread (not for a disabled agent, which refuses calls too).
// It returns what stopped a reply (nil: answered; errTakenOver).
func (s *Messages) answer(ctx context.Context, a model.Agent, m model.Message) error {
	thread, err := store.Read(ctx, s.Store, func(tx store.Tx) ([]model.Message, error) {
		return tx.ConversationMessages(ctx, m.OrgID, m.ConversationID, ThreadContext)
	})
	if err != nil {
		return fmt.Errorf("reading the thread: %w", err)
	}
	mc := a.Config.MessagingConfig
	if mc == nil {
		mc = &model.MessagingConfig{}
	}
	in := SendInput{To: opt.Value(m.FromNumber), AgentID: opt.Value(a.ID), MessagingConnectionID: opt.Value(*m.MessagingConnectionID)}
	if invalid.IsE164(m.ToNumber) {
		in.From = opt.Value(m.ToNumber) // answer from the number texted
	}
	if url := deref(mc.InboundWebhookURL); url != "" {
		ans, forwarded := s.forward(ctx, url, a, m, thread)
		switch {
		case forwarded && ans.AutoReply != nil && !*ans.AutoReply:
			return errTakenOver
		case forwarded && ans.Reply != nil:
			in.Body = opt.Value(*ans.Reply)
		}
	}
	o := origin{conversationID: m.ConversationID}
	if !in.Body.Present() && a.Status != model.AgentActive {
		return errors.New("the agent is disabled")
	}
	if k, kind := carrierKeyword(m.Body); kind != "" && !in.Body.Present() {
		return fmt.Errorf("%s is a carrier keyword (%s), which the carrier answers itself", k, kind)
	}
	if !in.Body.Present() {
		in.Generate = opt.Value(true)
		o.prompt, o.thread = replyPrompt(a, m), threadForModel(thread)
	}
	_, err = s.send(ctx, m.OrgID, in, o)
	return err
}

// forward delivers the inbound_message webhook and reads the receiver's
// answer; forwarded is false when it failed (the agent then replies).
func (s *Messages) forward(ctx context.Context, url string, a model.Agent, m model.Message, thread []model.Message) (ans InboundAnswer, forwarded bool) {
	if s.Webhooks == nil {
		return ans, false
	}
	body, err := json.Marshal(InboundPayload{Event: webhook.EventInboundMessage, AgentID: a.ID, ConversationID: m.ConversationID,
		Message: NewRecord(m), Conversation: records(thread)})
	if err != nil {
		return ans, false
	}
	secret := ""
	if s.Secret != nil {
		if secret, err = s.Secret(ctx, m.OrgID); err != nil {
			s.logger().Error("inbound message: the signing secret", "org", m.OrgID, "error", err)
		}
	}
	r := s.Webhooks.Deliver(ctx, webhook.Delivery{Event: webhook.EventInboundMessage, URL: url, Secret: secret, Body: body,
		Timeout: InboundWebhookTimeout, MaxResponse: maxWebhookAnswer})
	if !r.Sent {
		s.logger().Warn("inbound message: inboundWebhookUrl failed; the agent replies", "message", m.ID, "error", r.Err)
		return ans, false
	}
	if len(strings.TrimSpace(string(r.Body))) > 0 && json.Unmarshal(r.Body, &ans) != nil {
		return InboundAnswer{}, true // not our shape: an acknowledgement
	}
	if err := opt.CheckDuplicateKeys(r.Body); err != nil { // which of them the receiver meant is anyone's guess
		s.logger().Warn("inbound message: inboundWebhookUrl answered a key twice; the agent replies", "message", m.ID, "error", err)
		return InboundAnswer{}, true
	}
	if err := opt.CheckText(r.Body); err != nil { // a reply no store can keep
		s.logger().Warn("inbound message: inboundWebhookUrl answered text that cannot be stored; the agent replies", "message", m.ID, "error", err)
		return InboundAnswer{}, true
	}
	return ans, true
}

// replyPrompt is the model's instructions for a reply: the agent's SMS
// prompt, else its call prompt, rendered with the thread's variables (the
// agent's defaults and the system ones, direction inbound).
func replyPrompt(a model.Agent, m model.Message) string {
	template := a.Config.PromptTemplate
	if mc := a.Config.MessagingConfig; mc != nil && strings.TrimSpace(deref(mc.SMSPrompt)) != "" {
		template = *mc.SMSPrompt
	}
	vars := call.Merge(a.Config.DefaultVariables, call.SystemVariables(a, model.Inbound, m.FromNumber, m.ToNumber, time.Now()), nil)
	return call.Render(template, vars) + fmt.Sprintf("\n\nYou are texting with %s. The conversation so far follows.", m.FromNumber)
}

// Carrier keywords: texts carriers act on themselves (Twilio's defaults,
// and the CTIA's). An opt-out stops every text to the number through the
// connection until an opt-in; the agent answers none of them (the carrier
// answers opt-ins and help requests).
const (
	keywordOptOut = "opt-out"
	keywordOptIn  = "opt-in"
	keywordHelp   = "help"
)

var carrierKeywords = map[string]string{
	"STOP": keywordOptOut, "STOPALL": keywordOptOut, "UNSUBSCRIBE": keywordOptOut, "CANCEL": keywordOptOut,
	"END": keywordOptOut, "QUIT": keywordOptOut, "OPTOUT": keywordOptOut, "REVOKE": keywordOptOut,
	"START": keywordOptIn, "UNSTOP": keywordOptIn, "HELP": keywordHelp, "INFO": keywordHelp,
}

// carrierKeyword reports whether body is one of them alone (any case,
// surrounding spaces and punctuation ignored), and which kind.
func carrierKeyword(body string) (keyword, kind string) {
	k := strings.ToUpper(strings.Trim(body, " \t\r\n.!"))
	return k, carrierKeywords[k]
}

// threadForModel is the thread as the model's history: what the other
// party texted is the user's, what the agent sent the assistant's.
// Messages that never reached them (failed) are left out.
func threadForModel(thread []model.Message) []llm.Message {
	out := make([]llm.Message, 0, len(thread))
	for _, t := range thread {
		switch {
		case t.Direction == model.Inbound:
			out = append(out, llm.Message{Role: llm.RoleUser, Content: t.Body})
		case t.Status != model.MessageFailed && t.Status != model.MessageUndelivered:
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: t.Body})
		}
	}
	return out
}

func records(ms []model.Message) []Record {
	out := make([]Record, len(ms))
	for i, m := range ms {
		out[i] = NewRecord(m)
	}
	return out
}
