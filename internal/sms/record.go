package sms

import "github.com/parley-voice/parley/internal/model"

// Record is a message as the API answers it and the inbound_message
// webhook delivers it. It has no direction field, per the interface (the
// list filters on it).
type Record struct {
	ID                    string          `json:"id"`
	AgentID               *string         `json:"agentId"`
	AgentName             *string         `json:"agentName"`
	MessagingConnectionID *string         `json:"messagingConnectionId"`
	CallID                *string         `json:"callId"`
	ConversationID        string          `json:"conversationId"`
	Channel               string          `json:"channel"`
	FromNumber            string          `json:"fromNumber"`
	ToNumber              string          `json:"toNumber"`
	Body                  string          `json:"body"`
	Status                string          `json:"status"`
	ProviderMessageID     *string         `json:"providerMessageId"`
	GeneratedByLLM        bool            `json:"generatedByLlm"`
	ErrorMessage          *string         `json:"errorMessage"`
	CreatedAt             model.Timestamp `json:"createdAt"`
}

// NewRecord presents m.
func NewRecord(m model.Message) Record {
	return Record{ID: m.ID, AgentID: m.AgentID, AgentName: m.AgentName, MessagingConnectionID: m.MessagingConnectionID,
		CallID: m.CallID, ConversationID: m.ConversationID, Channel: m.Channel, FromNumber: m.FromNumber, ToNumber: m.ToNumber,
		Body: m.Body, Status: m.Status, ProviderMessageID: m.ProviderMessageID, GeneratedByLLM: m.GeneratedByLLM,
		ErrorMessage: m.ErrorMessage, CreatedAt: model.Timestamp(m.CreatedAt)}
}
