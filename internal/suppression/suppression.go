// Package suppression owns the organization's do-not-call list: numbers
// no campaign dials and POST /calls refuses. A number is on the list once;
// adding it again answers the entry it has.
package suppression

import (
	"context"
	"errors"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// MaxReasonLen is the longest reason, in characters.
const MaxReasonLen = 256

// Input is a POST /suppressions body.
type Input struct {
	Number opt.Field[string] `json:"number"`
	Reason opt.Field[string] `json:"reason"`
}

// Check applies the rules of an entry: a number in E.164, a reason of at
// most MaxReasonLen characters. The dashboard's CSV import checks each
// line with it.
func (in *Input) Check() error {
	var l invalid.List
	switch {
	case !in.Number.Present():
		l.Add("number", "is required")
	case !invalid.IsE164(in.Number.V):
		l.Add("number", "must be an E.164 number such as +14155550100")
	}
	if in.Reason.Present() && invalid.Len(in.Reason.V) > MaxReasonLen {
		l.Add("reason", "must be at most %d characters", MaxReasonLen)
	}
	return l.Err()
}

// Service keeps the do-not-call list.
type Service struct {
	Store store.Store
}

// Create puts a number on the list. created is false when it was there
// already: the existing entry is answered, its reason unchanged.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (entry model.Suppression, created bool, err error) {
	if err := in.Check(); err != nil {
		return model.Suppression{}, false, err
	}
	// Two requests for one number may race: the loser's insert is a
	// conflict (which, on PostgreSQL, ends its transaction), so it reads
	// the winner's entry in a second one.
	for range 2 {
		entry, created, err = s.create(ctx, orgID, in)
		if !errors.Is(err, store.ErrConflict) {
			return entry, created, err
		}
	}
	return model.Suppression{}, false, err
}

func (s *Service) create(ctx context.Context, orgID string, in Input) (entry model.Suppression, created bool, err error) {
	err = s.Store.Update(ctx, func(tx store.Tx) error {
		entry, err = tx.GetSuppressionByNumber(ctx, orgID, in.Number.V)
		if err == nil || !errors.Is(err, store.ErrNotFound) {
			return err
		}
		entry = model.Suppression{ID: model.NewID(), OrgID: orgID, Number: in.Number.V, Reason: in.Reason.Ptr(), CreatedAt: model.Now()}
		created = true
		return tx.CreateSuppression(ctx, &entry)
	})
	return entry, created, err
}

// Get returns one entry.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.Suppression, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.Suppression, error) { return tx.GetSuppression(ctx, orgID, id) })
}

// List returns a page of the list and how many entries match.
func (s *Service) List(ctx context.Context, orgID string, f store.SuppressionFilter) ([]model.Suppression, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.Suppression, int, error) { return tx.ListSuppressions(ctx, orgID, f) })
}

// Delete takes a number off the list.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteSuppression(ctx, orgID, id) })
}

// Suppressed reports whether the organization suppresses number.
func (s *Service) Suppressed(ctx context.Context, orgID, number string) (bool, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (bool, error) { return IsSuppressed(ctx, tx, orgID, number) })
}

// IsSuppressed is Suppressed inside the caller's transaction.
func IsSuppressed(ctx context.Context, tx store.Tx, orgID, number string) (bool, error) {
	_, err := tx.GetSuppressionByNumber(ctx, orgID, number)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
