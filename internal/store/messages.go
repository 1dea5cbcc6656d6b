package store

import (
	"context"
	"time"

	"github.com/parley-voice/parley/internal/model"
)

// Messages persists text messages. A message records its agent, messaging
// connection and call, it does not reference them: deleting the agent keeps
// its messages with agentId and agentName, as its calls keep them.
type Messages interface {
	// CreateMessage inserts m, setting its ID when empty and CreatedAt and
	// UpdatedAt when unset; an organization that does not exist is
	// ErrNotFound.
	CreateMessage(ctx context.Context, m *model.Message) error
	// GetMessage is ErrNotFound for another organization's message.
	GetMessage(ctx context.Context, orgID, id string) (model.Message, error)
	// UpdateMessage writes Status, ProviderMessageID, ErrorMessage, Body
	// (generation fills it), UpdatedAt (now when unset) and ReplyDueAt of
	// the message found by OrgID and ID, and nothing else.
	UpdateMessage(ctx context.Context, m *model.Message) error
	// DueReplies returns, most overdue first, at most limit messages of any
	// organization whose ReplyDueAt is at or before now (for the server
	// sweeping replies that a stopped server owed).
	DueReplies(ctx context.Context, now time.Time, limit int) ([]model.Message, error)
	// ClaimReply sets the message's ReplyDueAt to until if it was due at or
	// before now, and reports whether it did: of servers claiming one reply
	// at once, one wins.
	ClaimReply(ctx context.Context, orgID, id string, now, until time.Time) (bool, error)
	// SetOptOut records that number opted out of texts through the
	// connection with keyword at at (again: the newest keyword and time).
	SetOptOut(ctx context.Context, orgID, connID, number, keyword string, at time.Time) error
	// ClearOptOut records that number opted back in; none is no error.
	ClearOptOut(ctx context.Context, orgID, connID, number string) error
	// OptOutKeyword is the keyword with which number opted out of the
	// connection's texts; ErrNotFound when it has not.
	OptOutKeyword(ctx context.Context, orgID, connID, number string) (string, error)
	// MessageByProviderID finds a message by the carrier's id (status
	// callbacks carry only that); the newest one should the carrier reuse it.
	MessageByProviderID(ctx context.Context, orgID, providerID string) (model.Message, error)
	// ListMessages filters the organization's messages, newest first (or
	// oldest first with Asc), ties broken by id, and returns the total
	// count of the filtered list.
	ListMessages(ctx context.Context, orgID string, f MessageFilter) ([]model.Message, int, error)
	// ConversationMessages returns the thread's messages oldest first, at
	// most limit of the newest (the LLM's history); none when limit <= 0.
	ConversationMessages(ctx context.Context, orgID, conversationID string, limit int) ([]model.Message, error)
	// LastMessageBetween is the newest message of the agent with the
	// counterpart number, either direction (from it inbound, to it
	// outbound), for the conversation idle reset; ErrNotFound when none.
	LastMessageBetween(ctx context.Context, orgID, agentID, counterpart string) (model.Message, error)
	// CountMessagesSince counts OUTBOUND messages of the organization
	// created at or after since and, when toNumber != "", only those to it
	// (rate limits). A zero since counts them all.
	CountMessagesSince(ctx context.Context, orgID, toNumber string, since time.Time) (int, error)
}

// MessageFilter narrows a message list. Empty values mean "any".
type MessageFilter struct {
	Page
	AgentID   string
	FolderID  string // a folder id or FolderNone; messages whose agent was deleted (or that have none) never match
	CallID    string
	Direction string
	Status    string
}
