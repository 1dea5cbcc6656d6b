package api

import (
	"net/http"
	"strings"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/store"
)

// messageJSON is the message record (no direction field, per the
// interface; the list filters on it).
type messageJSON struct {
	ID                    string    `json:"id"`
	AgentID               *string   `json:"agentId"`
	AgentName             *string   `json:"agentName"`
	MessagingConnectionID *string   `json:"messagingConnectionId"`
	CallID                *string   `json:"callId"`
	ConversationID        string    `json:"conversationId"`
	Channel               string    `json:"channel"`
	FromNumber            string    `json:"fromNumber"`
	ToNumber              string    `json:"toNumber"`
	Body                  string    `json:"body"`
	Status                string    `json:"status"`
	ProviderMessageID     *string   `json:"providerMessageId"`
	GeneratedByLLM        bool      `json:"generatedByLlm"`
	ErrorMessage          *string   `json:"errorMessage"`
	CreatedAt             timestamp `json:"createdAt"`
}

func presentMessage(m model.Message) messageJSON {
	return messageJSON{ID: m.ID, AgentID: m.AgentID, AgentName: m.AgentName, MessagingConnectionID: m.MessagingConnectionID,
		CallID: m.CallID, ConversationID: m.ConversationID, Channel: m.Channel, FromNumber: m.FromNumber, ToNumber: m.ToNumber,
		Body: m.Body, Status: m.Status, ProviderMessageID: m.ProviderMessageID, GeneratedByLLM: m.GeneratedByLLM,
		ErrorMessage: m.ErrorMessage, CreatedAt: ts(m.CreatedAt)}
}

// messagePath reads a message id ("msg_..."): any other shape is not found.
func messagePath(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "msg_") || len(id) > 64 {
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return "", false
	}
	return id, true
}

func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.page()
	f := store.MessageFilter{
		Page:      q.storePage(p),
		AgentID:   q.uuid("agentId"),
		FolderID:  q.folder("folderId"),
		CallID:    q.uuid("callId"),
		Direction: q.enum("direction", "", model.Inbound, model.Outbound),
		Status: q.enum("status", "", model.MessageQueued, model.MessageSent, model.MessageDelivered, model.MessageUndelivered,
			model.MessageFailed, model.MessageReceived),
	}
	if err := q.done(); err != nil {
		writeError(w, r, err)
		return
	}
	msgs, total, err := s.Messages.List(r.Context(), orgID(r), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, mapSlice(msgs, presentMessage), p, total)
}

// messageStatus takes a carrier's status callback for a connection. It is
// public: the connection's auth token signs it (X-Twilio-Signature over the
// public URL and the form), and an unsigned or wrongly signed one is 401.
func (s *Server) messageStatus(w http.ResponseWriter, r *http.Request) {
	org := r.URL.Query().Get("org")
	if !model.IsUUID(org) || len(r.URL.Query()) != 1 {
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return
	}
	token, err := s.Messages.CallbackToken(r.Context(), org, r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeProblem(w, http.StatusBadRequest, codeValidationFailed, "the body is not a form", nil)
		return
	}
	if !twilio.ValidSignature(token, s.Messages.PublicURL+r.URL.RequestURI(), r.PostForm, r.Header.Get(twilio.SignatureHeader)) {
		writeProblem(w, http.StatusUnauthorized, codeUnauthorized, "invalid or missing X-Twilio-Signature", nil)
		return
	}
	if err := s.Messages.ApplyStatus(r.Context(), org, r.PostForm); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
