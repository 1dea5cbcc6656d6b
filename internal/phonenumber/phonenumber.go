// Package phonenumber owns the numbers an organization holds and their
// assignment: a number rings at most one agent, and an E.164 number exists
// once in a deployment so inbound routing is never ambiguous.
package phonenumber

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Input is a phone number create or partial-update request.
type Input struct {
	E164       opt.Field[string] `json:"e164"`
	SIPTrunkID opt.Field[string] `json:"sipTrunkId"`
	AgentID    opt.Field[string] `json:"agentId"`
}

func (in *Input) check(creating bool, l *invalid.List) {
	switch {
	case in.E164.Null:
		l.Add("e164", "must not be null")
	case creating && !in.E164.Set:
		l.Add("e164", "is required")
	case in.E164.Present() && !invalid.IsE164(in.E164.V):
		l.Add("e164", "must be an E.164 number such as +14155550100")
	}
	if in.SIPTrunkID.Present() && !model.IsUUID(in.SIPTrunkID.V) {
		l.Add("sipTrunkId", "must be a UUID")
	}
	if in.AgentID.Present() && !model.IsUUID(in.AgentID.V) {
		l.Add("agentId", "must be a UUID")
	}
}

// Service persists phone numbers.
type Service struct {
	Store store.Store
}

// Create stores a new number, optionally assigned.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (model.PhoneNumber, error) {
	var l invalid.List
	in.check(true, &l)
	now := model.Now()
	n := model.PhoneNumber{ID: model.NewID(), OrgID: orgID, CreatedAt: now, UpdatedAt: now}
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if err := apply(ctx, tx, &n, &in, &l); err != nil {
			return err
		}
		return registered(n.E164, tx.CreatePhoneNumber(ctx, &n))
	})
	return n, err
}

// apply checks the references of in, adding what is broken to l, and when
// nothing is, writes in onto n. Assigning a number that another agent holds
// is a conflict: it must be released first.
func apply(ctx context.Context, tx store.Tx, n *model.PhoneNumber, in *Input, l *invalid.List) error {
	if in.SIPTrunkID.Present() && !l.Has("sipTrunkId") {
		if _, err := tx.GetSIPTrunk(ctx, n.OrgID, in.SIPTrunkID.V); errors.Is(err, store.ErrNotFound) {
			l.Add("sipTrunkId", "names no SIP trunk in this organization")
		} else if err != nil {
			return err
		}
	}
	if in.AgentID.Present() && !l.Has("agentId") {
		if _, err := tx.GetAgent(ctx, n.OrgID, in.AgentID.V); errors.Is(err, store.ErrNotFound) {
			l.Add("agentId", "names no agent in this organization")
		} else if err != nil {
			return err
		}
	}
	if err := l.Err(); err != nil {
		return err
	}
	if in.AgentID.Present() && n.AgentID != nil && *n.AgentID != in.AgentID.V {
		return &invalid.Conflict{Message: fmt.Sprintf(
			"phone number %s is assigned to agent %s; unassign it (agentId null) first", n.E164, *n.AgentID)}
	}
	if in.E164.Present() {
		n.E164 = in.E164.V
	}
	if in.SIPTrunkID.Set {
		n.SIPTrunkID = in.SIPTrunkID.Ptr()
	}
	if in.AgentID.Set {
		n.AgentID = in.AgentID.Ptr()
	}
	return nil
}

// registered turns the store's uniqueness conflict into one the caller can read.
func registered(e164 string, err error) error {
	if errors.Is(err, store.ErrConflict) {
		return &invalid.Conflict{Message: fmt.Sprintf("phone number %s is already registered", e164)}
	}
	return err
}

// Get returns one number.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.PhoneNumber, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.PhoneNumber, error) { return tx.GetPhoneNumber(ctx, orgID, id) })
}

// List returns a page of numbers and their total count.
func (s *Service) List(ctx context.Context, orgID string, f store.PhoneNumberFilter) ([]model.PhoneNumber, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.PhoneNumber, int, error) { return tx.ListPhoneNumbers(ctx, orgID, f) })
}

// Update applies a partial update (agentId null releases the number).
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (model.PhoneNumber, error) {
	var l invalid.List
	in.check(false, &l)
	var n model.PhoneNumber
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if n, err = tx.GetPhoneNumber(ctx, orgID, id); err != nil {
			return err
		}
		if err := apply(ctx, tx, &n, &in, &l); err != nil {
			return err
		}
		n.UpdatedAt = model.Now()
		return registered(n.E164, tx.UpdatePhoneNumber(ctx, &n))
	})
	return n, err
}

// Delete removes a number.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeletePhoneNumber(ctx, orgID, id) })
}
