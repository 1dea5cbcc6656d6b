package sms

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/provider/llm"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/webhook"
)

// Limits of POST /messages.
const (
	MaxBodyLen        = 1600
	MaxHistory        = 50
	MaxSMSPromptLen   = 4000
	DefaultIdleReset  = 7 // days of silence after which a thread starts over
	generationTimeout = 20 * time.Second
)

// Carrier sends one SMS (twilio.Client).
type Carrier interface {
	Send(ctx context.Context, s twilio.Send) (twilio.Sent, error)
}

// Messages sends and lists text messages.
type Messages struct {
	Store store.Store
	Box   *secret.Box
	// LLM composes generated messages (nil: generation fails, naming
	// --llm-base-url); Model is its model ("" = the client's default).
	LLM   llm.Client
	Model string
	// Carrier opens a connection's carrier client (nil: twilio.New over
	// HTTPClient).
	Carrier func(c model.MessagingConnection, authToken string) (Carrier, error)
	// HTTPClient reaches carriers: the connection's base URL is the
	// customer's, so production passes webhook.GuardedClient (the SSRF
	// guard). nil: twilio's own client.
	HTTPClient *http.Client
	// OrgPerMinute and RecipientPerHour limit sends (0: the defaults).
	OrgPerMinute, RecipientPerHour int
	// PublicURL is this server's base URL as carriers reach it: status
	// callbacks are asked for under it ("": none are asked for).
	PublicURL string
	// CarrierTimeout bounds one carrier request (0: twilio.DefaultTimeout).
	CarrierTimeout time.Duration
	// Webhooks forwards inbound messages to the agents' inboundWebhookUrl,
	// signed with the organization's Secret (nil: not forwarded).
	Webhooks *webhook.Sender
	Secret   func(ctx context.Context, orgID string) (string, error)
	// Writes retries the record that an inbound text was dealt with while
	// the database does not take it (nil: the defaults of persist).
	Writes  *persist.Writer
	Logger  *slog.Logger
	Metrics *Metrics // nil: none

	bg background
}

// HistoryItem is one message of the inline history a generated message
// follows: role "user" (the recipient) or "assistant" (the agent).
type HistoryItem struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// SendInput is POST /messages.
type SendInput struct {
	To                    opt.Field[string]        `json:"to"`
	From                  opt.Field[string]        `json:"from"`
	AgentID               opt.Field[string]        `json:"agentId"`
	MessagingConnectionID opt.Field[string]        `json:"messagingConnectionId"`
	Body                  opt.Field[string]        `json:"body"`
	Generate              opt.Field[bool]          `json:"generate"`
	Messages              opt.Field[[]HistoryItem] `json:"messages"`
	SMSPrompt             opt.Field[string]        `json:"smsPrompt"`
}

func (in *SendInput) check() error {
	var l invalid.List
	switch {
	case !in.To.Present():
		l.Add("to", "is required")
	case !invalid.IsE164(in.To.V):
		l.Add("to", "must be an E.164 number like +14155550100")
	}
	if in.From.Null || in.From.Present() && !invalid.IsE164(in.From.V) {
		l.Add("from", "must be an E.164 number like +14155550100")
	}
	generate := in.Generate.Present() && in.Generate.V
	switch {
	case in.Body.Present() && generate:
		l.Add("body", "give either body or generate: true, not both")
	case !in.Body.Present() && !generate:
		l.Add("body", "is required unless generate is true")
	case in.Body.Present() && (invalid.IsBlank(in.Body.V) || invalid.Len(in.Body.V) > MaxBodyLen):
		l.Add("body", "must be 1 to %d characters", MaxBodyLen)
	}
	if in.Messages.Present() {
		if !generate {
			l.Add("messages", "is only used with generate: true")
		}
		if len(in.Messages.V) > MaxHistory {
			l.Add("messages", "must have at most %d items", MaxHistory)
		}
		for i, m := range in.Messages.V {
			if m.Role != "user" && m.Role != "assistant" {
				l.Add(fmt.Sprintf("messages[%d].role", i), "must be user or assistant")
			}
			if invalid.IsBlank(m.Content) || invalid.Len(m.Content) > MaxBodyLen {
				l.Add(fmt.Sprintf("messages[%d].content", i), "must be 1 to %d characters", MaxBodyLen)
			}
		}
	}
	if in.SMSPrompt.Present() && (invalid.IsBlank(in.SMSPrompt.V) || invalid.Len(in.SMSPrompt.V) > MaxSMSPromptLen) {
		l.Add("smsPrompt", "must be 1 to %d characters", MaxSMSPromptLen)
	}
	return l.Err()
}

// route is what a send resolved: who sends, through which connection.
type route struct {
	agent *model.Agent
	conn  model.MessagingConnection
	from  string // "" when sent through the connection's messaging service
	// optedOut is the keyword with which the recipient opted out of the
	// connection's texts ("": it has not).
	optedOut string
}

// Send sends one message as POST /messages describes. The record is stored
// (queued) before the carrier is called, so a carrier that fails or never
// answers leaves a record: failed, with errorMessage. Bad input changes
// nothing.
func (s *Messages) Send(ctx context.Context, orgID string, in SendInput) (model.Message, error) {
	return s.send(ctx, orgID, in, origin{})
}

// SendRecorded is Send with record run in the transaction that stores the
// message, after it, before it is delivered (an API request's
// Idempotency-Key): its error undoes the message, which is then neither
// stored nor sent, and is returned.
func (s *Messages) SendRecorded(ctx context.Context, orgID string, in SendInput, record func(store.Tx, model.Message) error) (model.Message, error) {
	return s.send(ctx, orgID, in, origin{record: record})
}

// origin is what a send knows beyond its input when it is not POST
// /messages.
type origin struct {
	callID *string // the call whose send_message tool sends it
	// An inbound reply: the thread it continues, the model's instructions,
	// and the thread's messages for the model (ending with the caller's).
	conversationID string
	prompt         string
	thread         []llm.Message
	// record runs in the transaction that stores the message.
	record func(store.Tx, model.Message) error
}

// send is Send for a message of a call, an inbound reply, or neither.
func (s *Messages) send(ctx context.Context, orgID string, in SendInput, o origin) (model.Message, error) {
	if err := in.check(); err != nil {
		return model.Message{}, err
	}
	rt, err := s.resolve(ctx, orgID, in)
	if err != nil {
		return model.Message{}, err
	}
	if err := s.checkRates(ctx, orgID, in.To.V); err != nil {
		return model.Message{}, err
	}
	now := model.Now()
	m := model.Message{ID: model.NewMessageID(), OrgID: orgID, MessagingConnectionID: &rt.conn.ID, Channel: model.ChannelSMS,
		Direction: model.Outbound, FromNumber: rt.from, ToNumber: in.To.V, Body: in.Body.V, Status: model.MessageQueued,
		CreatedAt: now, UpdatedAt: now}
	if rt.agent != nil {
		m.AgentID, m.AgentName = &rt.agent.ID, &rt.agent.Name
	}
	m.CallID = o.callID
	var failure error
	if rt.optedOut != "" {
		// Recorded failed; neither the model nor the carrier is asked.
		failure = fmt.Errorf("the recipient opted out of this connection's texts (they sent %s); they opt back in by texting START", rt.optedOut)
	} else if in.Generate.Present() && in.Generate.V {
		m.GeneratedByLLM = true
		if o.thread != nil {
			m.Body, failure = s.compose(ctx, o.prompt, o.thread)
		} else {
			m.Body, failure = s.generate(ctx, rt, in)
		}
	}
	err = s.Store.Update(ctx, func(tx store.Tx) error {
		m.ConversationID = o.conversationID
		if m.ConversationID == "" {
			m.ConversationID = s.conversation(ctx, tx, orgID, rt, in.To.V)
		}
		if err := tx.CreateMessage(ctx, &m); err != nil || o.record == nil {
			return err
		}
		return o.record(tx, m)
	})
	if err != nil {
		return model.Message{}, err
	}
	if failure == nil {
		failure = s.deliver(ctx, rt, &m)
	}
	if failure != nil {
		msg := invalid.Storable(failure.Error()) // may quote the carrier
		m.Status, m.ErrorMessage = model.MessageFailed, &msg
	}
	m.UpdatedAt = model.Now()
	err = s.Store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error { return tx.UpdateMessage(ctx, &m) })
	s.Metrics.message("outbound", m.Status)
	return m, err
}

// SendFromCall sends body to the other party of a call, attributed to the
// call's agent and recorded with its callId (the send_message tool).
func (s *Messages) SendFromCall(ctx context.Context, c model.Call, body string) (model.Message, error) {
	to := c.FromNumber
	if c.Direction == model.Outbound {
		to = c.ToNumber
	}
	// The body is the model's: stored as it came, but for bytes no store can hold.
	in := SendInput{To: opt.Value(to), AgentID: opt.Value(c.AgentID), Body: opt.Value(invalid.Storable(body))}
	return s.send(ctx, c.OrgID, in, origin{callID: &c.ID})
}

// resolve finds the agent, the connection and the sender number.
func (s *Messages) resolve(ctx context.Context, orgID string, in SendInput) (route, error) {
	var rt route
	err := s.Store.View(ctx, func(tx store.Tx) error {
		connID := ""
		if in.AgentID.Present() {
			a, err := tx.GetAgent(ctx, orgID, in.AgentID.V)
			if errors.Is(err, store.ErrNotFound) {
				return invalid.One("agentId", "no such agent")
			} else if err != nil {
				return err
			}
			rt.agent = &a
			if a.MessagingConnectionID != nil {
				connID = *a.MessagingConnectionID
			}
		}
		if in.MessagingConnectionID.Present() {
			connID = in.MessagingConnectionID.V
		}
		if connID == "" {
			return invalid.One("messagingConnectionId", "is required when no agent with a messaging connection is given")
		}
		c, err := tx.GetMessagingConnection(ctx, orgID, connID)
		if errors.Is(err, store.ErrNotFound) {
			return invalid.One("messagingConnectionId", "no such messaging connection")
		} else if err != nil {
			return err
		}
		rt.conn = c
		rt.optedOut, err = tx.OptOutKeyword(ctx, orgID, c.ID, in.To.V)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return rt, err
	}
	switch {
	case in.From.Present():
		rt.from = in.From.V
	case rt.agent != nil && rt.agent.Config.MessagingConfig != nil && deref(rt.agent.Config.MessagingConfig.FromNumber) != "":
		rt.from = *rt.agent.Config.MessagingConfig.FromNumber
	case deref(rt.conn.FromNumber) != "":
		rt.from = *rt.conn.FromNumber
	case deref(rt.conn.MessagingServiceSID) == "":
		return rt, invalid.One("from", "is required: the messaging connection has no number or messaging service")
	}
	return rt, nil
}

// conversation is the thread a message with counterpart belongs to: the
// agent's last thread with the number, unless it has been silent for the
// agent's conversationIdleResetDays (default 7); a new one otherwise.
func (s *Messages) conversation(ctx context.Context, tx store.Tx, orgID string, rt route, counterpart string) string {
	if rt.agent == nil {
		return model.NewPrefixedID("conv")
	}
	days := DefaultIdleReset
	if mc := rt.agent.Config.MessagingConfig; mc != nil && mc.ConversationIdleResetDays != nil && *mc.ConversationIdleResetDays > 0 {
		days = *mc.ConversationIdleResetDays
	}
	last, err := tx.LastMessageBetween(ctx, orgID, rt.agent.ID, counterpart)
	if err == nil && last.ConversationID != "" && time.Since(last.CreatedAt) < time.Duration(days)*24*time.Hour {
		return last.ConversationID
	}
	return model.NewPrefixedID("conv")
}

// generate composes the message of POST /messages with the model, from
// the SMS prompt and the inline history.
func (s *Messages) generate(ctx context.Context, rt route, in SendInput) (string, error) {
	prompt := in.SMSPrompt.V
	if !in.SMSPrompt.Present() && rt.agent != nil && rt.agent.Config.MessagingConfig != nil {
		prompt = deref(rt.agent.Config.MessagingConfig.SMSPrompt)
	}
	if strings.TrimSpace(prompt) == "" {
		return "", errors.New("generation needs an SMS prompt: give smsPrompt or set the agent's messagingConfig.smsPrompt")
	}
	var history []llm.Message
	for _, h := range in.Messages.V {
		history = append(history, llm.Message{Role: h.Role, Content: h.Content})
	}
	history = append(history, llm.Message{Role: llm.RoleUser, Content: "(Write the next message to " + in.To.V + ".)"})
	return s.compose(ctx, prompt, history)
}

// compose has the model write one message: prompt is its instructions,
// history the conversation so far, ending with what it answers.
func (s *Messages) compose(ctx context.Context, prompt string, history []llm.Message) (string, error) {
	if s.LLM == nil {
		return "", errors.New("generation needs a language model: set --llm-base-url (PARLEY_LLM_BASE_URL)")
	}
	msgs := append([]llm.Message{{Role: llm.RoleSystem, Content: prompt + "\n\nYou write one SMS text message. Reply with the message text only, under " +
		fmt.Sprint(MaxBodyLen) + " characters, no quotes."}}, history...)
	gctx, cancel := context.WithTimeout(ctx, generationTimeout)
	defer cancel()
	res, err := s.LLM.Stream(gctx, llm.Request{Model: s.Model, Messages: msgs}, func(string) error { return nil })
	if err != nil {
		return "", fmt.Errorf("generation failed: %w", err)
	}
	text := strings.Trim(strings.TrimSpace(invalid.Storable(res.Text)), `"`)
	if text == "" {
		return "", errors.New("generation failed: the model wrote nothing")
	}
	for utf8.RuneCountInString(text) > MaxBodyLen {
		r := []rune(text)
		text = string(r[:MaxBodyLen])
	}
	return text, nil
}

// deliver hands the message to the carrier and records its answer.
func (s *Messages) deliver(ctx context.Context, rt route, m *model.Message) error {
	token, err := s.Box.Open(rt.conn.AuthToken)
	if err != nil {
		return errors.New("the messaging connection's credentials cannot be read")
	}
	open := s.Carrier
	if open == nil {
		open = func(c model.MessagingConnection, token string) (Carrier, error) {
			return twilio.New(twilio.Config{BaseURL: c.BaseURL, AccountSID: c.AccountSID, AuthToken: token, HTTPClient: s.HTTPClient,
				Timeout: s.CarrierTimeout})
		}
	}
	carrier, err := open(rt.conn, token)
	if err != nil {
		return err
	}
	if c, ok := carrier.(interface{ Close() }); ok {
		defer c.Close()
	}
	send := twilio.Send{To: m.ToNumber, From: m.FromNumber, Body: m.Body}
	if s.PublicURL != "" {
		send.StatusCallback = s.PublicURL + statusPath(m.OrgID, rt.conn.ID)
	}
	if m.FromNumber == "" {
		send.MessagingServiceSID = deref(rt.conn.MessagingServiceSID)
	}
	sent, err := carrier.Send(ctx, send)
	if err != nil {
		return err
	}
	m.ProviderMessageID = &sent.SID
	m.Status = model.MessageSent
	return nil
}

// Get returns one message.
func (s *Messages) Get(ctx context.Context, orgID, id string) (model.Message, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.Message, error) { return tx.GetMessage(ctx, orgID, id) })
}

// List returns a page of messages and the number matching the filter.
func (s *Messages) List(ctx context.Context, orgID string, f store.MessageFilter) ([]model.Message, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.Message, int, error) { return tx.ListMessages(ctx, orgID, f) })
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
