package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/sms"
	"github.com/parley-voice/parley/internal/sms/twilio"
	"github.com/parley-voice/parley/internal/store"
)

// presentMessage is the message record.
func presentMessage(m model.Message) sms.Record { return sms.NewRecord(m) }

// messagePath reads a message id ("msg_" and 24 hex digits): any other
// shape is not found, and never reaches the store.
func messagePath(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !model.IsMessageID(id) {
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

// messageStatus takes a carrier's status callback for a connection.
func (s *Server) messageStatus(w http.ResponseWriter, r *http.Request) {
	org, ok := s.carrierWebhook(w, r)
	if !ok {
		return
	}
	if err := s.Messages.ApplyStatus(r.Context(), org, r.PostForm); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

// emptyTwiML answers a carrier's inbound webhook: nothing to do now, the
// reply (if any) is sent through the API.
const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`

// inboundMessage takes a carrier's inbound-message webhook for a
// connection: the message is recorded, then forwarded and answered in the
// background.
func (s *Server) inboundMessage(w http.ResponseWriter, r *http.Request) {
	org, ok := s.carrierWebhook(w, r)
	if !ok {
		return
	}
	if _, err := s.Messages.Receive(r.Context(), org, r.PathValue("id"), sms.InboundFrom(r.PostForm)); err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(emptyTwiML))
}

// carrierWebhook authenticates a carrier's webhook to a connection's
// public URL (?org=<organization id>): the connection's auth token signs it
// (X-Twilio-Signature over the public URL and the form), and an unsigned or
// wrongly signed one is 401. It returns the organization, with r.PostForm
// parsed.
func (s *Server) carrierWebhook(w http.ResponseWriter, r *http.Request) (string, bool) {
	org := r.URL.Query().Get("org")
	if !model.IsUUID(org) || len(r.URL.Query()) != 1 {
		writeProblem(w, http.StatusNotFound, codeNotFound, messageNotFound, nil)
		return "", false
	}
	connID, ok := pathConnectionID(w, r)
	if !ok {
		return "", false
	}
	token, err := s.Messages.CallbackToken(r.Context(), org, connID)
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	if err := r.ParseForm(); err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			writeError(w, r, err)
		} else {
			writeProblem(w, http.StatusBadRequest, codeValidationFailed, "the body is not a form", nil)
		}
		return "", false
	}
	if !twilio.ValidSignature(token, s.Messages.PublicURL+r.URL.RequestURI(), r.PostForm, r.Header.Get(twilio.SignatureHeader)) {
		writeProblem(w, http.StatusUnauthorized, codeUnauthorized, "invalid or missing X-Twilio-Signature", nil)
		return "", false
	}
	// A form is text like a JSON body (invalid.Text); the carrier hears 400.
	var l invalid.List
	if invalid.Values(r.PostForm, &l) != nil {
		writeError(w, r, l.Err())
		return "", false
	}
	return org, true
}

// sendMessage is POST /messages. Its answer (the message after its
// delivery was tried) comes after the commit, so an Idempotency-Key is
// stored with the message and its answer once it is known.
func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	key, done := s.idempotency(w, r, func(ctx context.Context, orgID, id string) (any, error) {
		m, err := s.Messages.Get(ctx, orgID, id)
		return presentMessage(m), err
	})
	if done {
		return
	}
	var in sms.SendInput
	if err := decode(r, &in); err != nil {
		writeError(w, r, err)
		return
	}
	var record func(store.Tx, model.Message) error
	if key != nil {
		record = func(tx store.Tx, m model.Message) error {
			return key.record(r.Context(), tx, m.ID, http.StatusCreated, nil)
		}
	}
	m, err := s.Messages.SendRecorded(r.Context(), orgID(r), in, record)
	if errors.Is(err, errKeyUsed) {
		s.answerRetry(w, r, key)
		return
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.afterCommit()
	s.respond(w, r, key, http.StatusCreated, presentMessage(m))
}
