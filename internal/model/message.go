package model

import (
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Message channels.
const ChannelSMS = "sms"

// Message statuses. An outbound message is queued, then sent, then
// delivered or undelivered (failed when the carrier refused it); an inbound
// one is received.
const (
	MessageQueued      = "queued"
	MessageSent        = "sent"
	MessageDelivered   = "delivered"
	MessageUndelivered = "undelivered"
	MessageFailed      = "failed"
	MessageReceived    = "received"
)

// Message is one text message, sent or received. Like a call, it records
// its agent (AgentID and AgentName stay when the agent is deleted), its
// messaging connection and its call rather than referencing them.
type Message struct {
	ID                    string // "msg_" and 24 hex digits; set by CreateMessage when empty
	OrgID                 string
	AgentID               *string
	AgentName             *string
	MessagingConnectionID *string
	CallID                *string
	// ConversationID groups a thread (an agent and a counterpart number);
	// the caller sets it.
	ConversationID    string
	Channel           string // ChannelSMS
	Direction         string // Inbound or Outbound
	FromNumber        string
	ToNumber          string
	Body              string
	Status            string
	ProviderMessageID *string // the carrier's id
	GeneratedByLLM    bool
	ErrorMessage      *string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// ReplyDueAt is set on an inbound message the agent still owes a
	// reply: until then a server is answering it; after it, any server may
	// take it over. nil: nothing owed (answered, taken over, or given up).
	ReplyDueAt *time.Time
}

// messageIDPrefix starts every message id.
const messageIDPrefix = "msg_"

// NewMessageID returns a new message id: "msg_" and 24 hex digits, the
// first 96 bits of a UUIDv7. They sort in creation order, so a thread's
// messages created within one millisecond (an inbound text and a fast
// reply) keep their order: the store breaks created_at ties by id.
func NewMessageID() string {
	u := uuid.Must(uuid.NewV7())
	return messageIDPrefix + hex.EncodeToString(u[:12])
}

// IsMessageID reports whether s has the shape of a message id.
func IsMessageID(s string) bool {
	rest, ok := strings.CutPrefix(s, messageIDPrefix)
	if !ok || len(rest) != 24 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil && strings.ToLower(rest) == rest
}
