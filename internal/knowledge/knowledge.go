// Package knowledge owns knowledge bases, the collections of text sources
// agents retrieve from: their sources, how a source is split into chunks
// (chunk.go) and indexed (index.go: the store's full-text index, and
// vectors when an embeddings provider is configured), and retrieval
// (retrieve.go: ranking, scores from 0 to 1, hybrid fusion). Deleting a base
// removes its sources and unlinks the agents it was assigned to.
package knowledge

import (
	"context"
	"log/slog"
	"sync"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/persist"
	"github.com/parley-voice/parley/internal/store"
)

// Limits.
const (
	MaxNameLen        = 128
	MaxDescriptionLen = 2000
)

// Input is a knowledge base create or partial-update request.
type Input struct {
	Name        opt.Field[string] `json:"name"`
	Description opt.Field[string] `json:"description"`
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
	if in.Description.Present() && invalid.Len(in.Description.V) > MaxDescriptionLen {
		l.Add("description", "must be at most %d characters", MaxDescriptionLen)
	}
	return l.Err()
}

func (in *Input) apply(kb *model.KnowledgeBase) {
	if in.Name.Present() {
		kb.Name = in.Name.V
	}
	if in.Description.Set {
		kb.Description = in.Description.Ptr()
	}
}

// Service persists knowledge bases and their sources, indexes sources and
// answers queries.
type Service struct {
	Store store.Store
	// Embedder, when set, embeds chunks and queries: retrieval is then
	// hybrid (full text and vectors, fused).
	Embedder Embedder
	// Writes retries background indexing's writes while the database does
	// not take them (nil: the defaults of persist).
	Writes *persist.Writer
	Logger *slog.Logger

	tasks  sync.WaitGroup // background indexing
	once   sync.Once
	base   context.Context // of background indexing
	cancel context.CancelFunc
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// Create stores a new knowledge base.
func (s *Service) Create(ctx context.Context, orgID string, in Input) (model.KnowledgeBase, error) {
	if err := in.check(true); err != nil {
		return model.KnowledgeBase{}, err
	}
	now := model.Now()
	kb := model.KnowledgeBase{ID: model.NewID(), OrgID: orgID, CreatedAt: now, UpdatedAt: now}
	in.apply(&kb)
	err := s.Store.Update(ctx, func(tx store.Tx) error { return tx.CreateKnowledgeBase(ctx, &kb) })
	return kb, err
}

// Get returns one knowledge base.
func (s *Service) Get(ctx context.Context, orgID, id string) (model.KnowledgeBase, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.KnowledgeBase, error) { return tx.GetKnowledgeBase(ctx, orgID, id) })
}

// List returns a page of knowledge bases and their total count.
func (s *Service) List(ctx context.Context, orgID string, p store.Page) ([]model.KnowledgeBase, int, error) {
	return store.ReadPage(ctx, s.Store, func(tx store.Tx) ([]model.KnowledgeBase, int, error) { return tx.ListKnowledgeBases(ctx, orgID, p) })
}

// Update applies a partial update.
func (s *Service) Update(ctx context.Context, orgID, id string, in Input) (model.KnowledgeBase, error) {
	if err := in.check(false); err != nil {
		return model.KnowledgeBase{}, err
	}
	var kb model.KnowledgeBase
	err := s.Store.Update(ctx, func(tx store.Tx) (err error) {
		if kb, err = tx.GetKnowledgeBase(ctx, orgID, id); err != nil {
			return err
		}
		in.apply(&kb)
		kb.UpdatedAt = model.Now()
		return tx.UpdateKnowledgeBase(ctx, &kb)
	})
	return kb, err
}

// Delete removes a knowledge base and unlinks it from agents.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteKnowledgeBase(ctx, orgID, id) })
}

// Detail is a knowledge base with its sources.
type Detail struct {
	model.KnowledgeBase
	Sources []model.KnowledgeSource
}

// GetDetail returns a base with its sources (GET /knowledge-bases/{id}).
func (s *Service) GetDetail(ctx context.Context, orgID, id string) (Detail, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (Detail, error) {
		kb, err := tx.GetKnowledgeBase(ctx, orgID, id)
		if err != nil {
			return Detail{}, err
		}
		sources, err := tx.ListKnowledgeSources(ctx, orgID, id)
		return Detail{kb, sources}, err
	})
}

// UpdateDetail applies a partial update and returns the base with its
// sources.
func (s *Service) UpdateDetail(ctx context.Context, orgID, id string, in Input) (Detail, error) {
	if _, err := s.Update(ctx, orgID, id, in); err != nil {
		return Detail{}, err
	}
	return s.GetDetail(ctx, orgID, id)
}

// CreateDetail stores a new base (it has no sources yet).
func (s *Service) CreateDetail(ctx context.Context, orgID string, in Input) (Detail, error) {
	kb, err := s.Create(ctx, orgID, in)
	return Detail{kb, []model.KnowledgeSource{}}, err
}
