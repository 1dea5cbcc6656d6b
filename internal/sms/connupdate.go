package sms

import (
	"context"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// Update applies a partial update to a connection: keys present are set;
// null clears name, fromNumber or messagingServiceSid, and puts baseUrl
// back to the default. provider, accountSid and authToken cannot be
// cleared, and the connection keeps at least one sender.
func (s *Connections) Update(ctx context.Context, orgID, id string, in ConnectionInput) (model.MessagingConnection, error) {
	if err := in.check(false); err != nil {
		return model.MessagingConnection{}, err
	}
	var c model.MessagingConnection
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		var err error
		if c, err = tx.GetMessagingConnection(ctx, orgID, id); err != nil {
			return err
		}
		s.apply(&c, &in)
		if c.FromNumber == nil && c.MessagingServiceSID == nil {
			return invalid.One("fromNumber", noSender)
		}
		c.UpdatedAt = model.Now()
		return tx.UpdateMessagingConnection(ctx, &c)
	})
	return c, err
}

// apply sets what in carries on c: all of a create, the keys of an update.
func (s *Connections) apply(c *model.MessagingConnection, in *ConnectionInput) {
	if in.Name.Set {
		c.Name = in.Name.Ptr()
	}
	if in.Provider.Present() {
		c.Provider = in.Provider.V
	}
	if in.BaseURL.Set {
		c.BaseURL = DefaultBaseURL
		if in.BaseURL.Present() {
			c.BaseURL = in.BaseURL.V
		}
	}
	if in.AccountSID.Present() {
		c.AccountSID = in.AccountSID.V
	}
	if in.AuthToken.Present() {
		c.AuthToken = s.Box.Seal(in.AuthToken.V)
	}
	if in.FromNumber.Set {
		c.FromNumber = in.FromNumber.Ptr()
	}
	if in.MessagingServiceSID.Set {
		c.MessagingServiceSID = in.MessagingServiceSID.Ptr()
	}
}
