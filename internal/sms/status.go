package sms

import (
	"context"
	"errors"
	"net/url"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// statusPath is where carriers post a connection's status callbacks,
// under the public URL; the organization rides in the query (the path's
// connection id is looked up within it, and the signature authenticates).
func statusPath(orgID, connID string) string {
	return "/v1/messaging-connections/" + url.PathEscape(connID) + "/status?org=" + url.QueryEscape(orgID)
}

// InboundURL is where the carrier posts the texts a connection's numbers
// receive ("" when the public URL is unknown).
func (s *Messages) InboundURL(c model.MessagingConnection) string {
	if s.PublicURL == "" {
		return ""
	}
	return s.PublicURL + "/v1/messaging-connections/" + url.PathEscape(c.ID) + "/inbound?org=" + url.QueryEscape(c.OrgID)
}

// CallbackToken returns the auth token of a connection, which signs its
// carrier's callbacks (X-Twilio-Signature).
func (s *Messages) CallbackToken(ctx context.Context, orgID, connID string) (string, error) {
	c, err := store.Read(ctx, s.Store, func(tx store.Tx) (model.MessagingConnection, error) {
		return tx.GetMessagingConnection(ctx, orgID, connID)
	})
	if err != nil {
		return "", err
	}
	return s.Box.Open(c.AuthToken)
}

// carrierStatuses maps the carrier's MessageStatus to ours; the others
// (accepted, scheduled, queued, sending, ...) are steps we do not record.
var carrierStatuses = map[string]string{
	"sent": model.MessageSent, "delivered": model.MessageDelivered,
	"undelivered": model.MessageUndelivered, "failed": model.MessageFailed,
}

// ApplyStatus records a verified status callback: the message the carrier
// names (MessageSid) takes its status, and ErrorCode becomes its
// errorMessage. A message of no record, or a step we do not record, is
// ignored (carriers retry errors; nothing is wrong).
func (s *Messages) ApplyStatus(ctx context.Context, orgID string, form url.Values) error {
	status, ok := carrierStatuses[form.Get("MessageStatus")]
	sid := form.Get("MessageSid")
	if !ok || sid == "" {
		return nil
	}
	return s.Store.Update(ctx, func(tx store.Tx) error {
		m, err := tx.MessageByProviderID(ctx, orgID, sid)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if m.Status == model.MessageDelivered || m.Status == model.MessageUndelivered {
			return nil // final: a late "sent" does not undo it
		}
		m.Status = status
		if code := form.Get("ErrorCode"); code != "" && code != "0" {
			msg := "carrier error " + code
			m.ErrorMessage = &msg
		}
		m.UpdatedAt = model.Now()
		return tx.UpdateMessage(ctx, &m)
	})
}
