// Package folder owns folders, the optional grouping of agents. Deleting a
// folder leaves its agents uncategorized rather than refusing.
package folder

import (
	"context"
	"regexp"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// MaxNameLen is the longest folder name, in characters.
const MaxNameLen = 128

var color = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Input is a folder create or partial-update request.
type Input struct {
	Name  opt.Field[string] `json:"name"`
	Color opt.Field[string] `json:"color"`
}

func (in *Input) check(creating bool) error {
	var l invalid.List
	switch {
	case in.Name.Null:
		l.Add("name", "must not be null")
	case creating && !in.Name.Set:
		l.Add("name", "is required")
	case in.Name.Present() && invalid.IsBlank(in.Name.V):
		l.Add("name", "must not be empty")
	case in.Name.Present() && invalid.Len(in.Name.V) > MaxNameLen:
		l.Add("name", "must be at most %d characters", MaxNameLen)
	}
	if in.Color.Present() && !color.MatchString(in.Color.V) {
		l.Add("color", "must be a hex color such as #3b82f6")
	}
	return l.Err()
}

func (in *Input) apply(f *model.Folder) {
	if in.Name.Present() {
		f.Name = in.Name.V
	}
	if in.Color.Set {
		f.Color = in.Color.Ptr()
	}
}

// Service persists folders.
type Service struct {
	Store store.Store
}

// Create stores a new folder.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (model.Folder, error) {
	if err := in.check(true); err != nil {
		return model.Folder{}, err
	}
	now := model.Now()
	f := model.Folder{ID: model.NewID(), OrgID: orgID, CreatedAt: now, UpdatedAt: now}
	in.apply(&f)
	err := s.Store.Update(ctx, func(tx store.Tx) error { return tx.CreateFolder(ctx, &f) })
	return f, err
}

// Get returns one folder.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.Folder, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.Folder, error) { return tx.GetFolder(ctx, orgID, id) })
}

// List returns a page of folders and their total count.
func (s *Service) List(ctx context.Context, orgID string, p store.Page) ([]model.Folder, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.Folder, int, error) { return tx.ListFolders(ctx, orgID, p) })
}

// Update applies a partial update.
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (model.Folder, error) {
	if err := in.check(false); err != nil {
		return model.Folder{}, err
	}
	var f model.Folder
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if f, err = tx.GetFolder(ctx, orgID, id); err != nil {
			return err
		}
		in.apply(&f)
		f.UpdatedAt = model.Now()
		return tx.UpdateFolder(ctx, &f)
	})
	return f, err
}

// Delete removes a folder; its agents become uncategorized.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteFolder(ctx, orgID, id) })
}
