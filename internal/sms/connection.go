// Package sms owns text messaging: the messaging connections (Twilio-
// compatible accounts) agents send and receive through. Auth tokens are
// write-only and sealed at rest.
package sms

import (
	"context"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
)

// Connection defaults and limits.
const (
	ProviderTwilio = "twilio"
	DefaultBaseURL = "https://api.twilio.com"
	MaxNameLen     = 128
	MaxSIDLen      = 64
	MaxTokenLen    = 256
	IDPrefix       = "mc"
)

// ConnectionInput is a messaging connection create request.
type ConnectionInput struct {
	Name                opt.Field[string] `json:"name"`
	Provider            opt.Field[string] `json:"provider"`
	BaseURL             opt.Field[string] `json:"baseUrl"`
	AccountSID          opt.Field[string] `json:"accountSid"`
	AuthToken           opt.Field[string] `json:"authToken"`
	FromNumber          opt.Field[string] `json:"fromNumber"`
	MessagingServiceSID opt.Field[string] `json:"messagingServiceSid"`
}

// check checks a create (creating) or a partial update: an update checks
// the keys it sets, and Update checks the sender after applying them.
func (in *ConnectionInput) check(creating bool) error {
	var l invalid.List
	required := func(name string, f opt.Field[string], max int) {
		if creating || f.Set {
			requiredString(&l, name, f, max)
		}
	}
	required("provider", in.Provider, 0)
	required("accountSid", in.AccountSID, MaxSIDLen)
	required("authToken", in.AuthToken, MaxTokenLen)
	if in.Provider.Present() && in.Provider.V != ProviderTwilio {
		l.Add("provider", "must be one of twilio")
	}
	if in.Name.Present() && invalid.Len(in.Name.V) > MaxNameLen {
		l.Add("name", "must be at most %d characters", MaxNameLen)
	}
	if in.BaseURL.Present() && !invalid.IsHTTPURL(in.BaseURL.V) {
		l.Add("baseUrl", "must be an absolute http or https URL")
	}
	if in.FromNumber.Present() && !invalid.IsE164(in.FromNumber.V) {
		l.Add("fromNumber", "must be an E.164 number such as +14155550100")
	}
	if in.MessagingServiceSID.Present() && (in.MessagingServiceSID.V == "" || invalid.Len(in.MessagingServiceSID.V) > MaxSIDLen) {
		l.Add("messagingServiceSid", "must be 1 to %d characters", MaxSIDLen)
	}
	if creating && !in.FromNumber.Present() && !in.MessagingServiceSID.Present() {
		l.Add("fromNumber", noSender)
	}
	return l.Err()
}

// noSender is the refusal of a connection with neither sender.
const noSender = "or messagingServiceSid is required"

func requiredString(l *invalid.List, name string, f opt.Field[string], max int) {
	switch {
	case !f.Present():
		l.Add(name, "is required")
	case invalid.IsBlank(f.V):
		l.Add(name, "must not be empty")
	case max > 0 && invalid.Len(f.V) > max:
		l.Add(name, "must be at most %d characters", max)
	}
}

// Connections persists messaging connections.
type Connections struct {
	Store store.Store
	Box   *secret.Box
}

// Create stores a new connection.
func (s *Connections) Create(ctx context.Context, orgID string, in ConnectionInput) (model.MessagingConnection, error) {
	if err := in.check(true); err != nil {
		return model.MessagingConnection{}, err
	}
	now := model.Now()
	c := model.MessagingConnection{ID: model.NewPrefixedID(IDPrefix), OrgID: orgID, BaseURL: DefaultBaseURL, CreatedAt: now, UpdatedAt: now}
	s.apply(&c, &in)
	err := s.Store.Update(ctx, func(tx store.Tx) error { return tx.CreateMessagingConnection(ctx, &c) })
	return c, err
}

// Get returns one connection.
func (s *Connections) Get(ctx context.Context, orgID, id string) (model.MessagingConnection, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.MessagingConnection, error) { return tx.GetMessagingConnection(ctx, orgID, id) })
}

// List returns a page of connections and their total count.
func (s *Connections) List(ctx context.Context, orgID string, p store.Page) ([]model.MessagingConnection, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.MessagingConnection, int, error) {
		return tx.ListMessagingConnections(ctx, orgID, p)
	})
}

// Delete removes a connection; agents using it lose it.
func (s *Connections) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteMessagingConnection(ctx, orgID, id) })
}
