package knowledge

import (
	"context"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	"github.com/parley-voice/parley/internal/store"
)

// Source limits (the interface's).
const (
	MaxDisplayNameLen = 256
	MaxContentLen     = 100_000
)

// SourceInput is POST /knowledge-bases/{id}/sources.
type SourceInput struct {
	SourceType  opt.Field[string] `json:"sourceType"`
	DisplayName opt.Field[string] `json:"displayName"`
	Content     opt.Field[string] `json:"content"`
}

func (in *SourceInput) check() error {
	var l invalid.List
	switch {
	case !in.SourceType.Present():
		l.Add("sourceType", "is required")
	case in.SourceType.V != "text":
		l.Add("sourceType", "must be text")
	}
	switch {
	case !in.DisplayName.Present():
		l.Add("displayName", "is required")
	case invalid.IsBlank(in.DisplayName.V):
		l.Add("displayName", "must not be empty")
	case invalid.Len(in.DisplayName.V) > MaxDisplayNameLen:
		l.Add("displayName", "must be at most %d characters", MaxDisplayNameLen)
	}
	switch {
	case !in.Content.Present():
		l.Add("content", "is required")
	case invalid.IsBlank(in.Content.V):
		l.Add("content", "must not be empty")
	case invalid.Len(in.Content.V) > MaxContentLen:
		l.Add("content", "must be at most %d characters", MaxContentLen)
	}
	return l.Err()
}

// AddSource stores a text source and indexes it: at once when it is small
// and no embeddings are needed (and the database takes the chunks at the
// first try), in the background otherwise (the source is returned first;
// its errorMessage tells if indexing failed).
func (s *Service) AddSource(ctx context.Context, orgID, kbID string, in SourceInput) (model.KnowledgeSource, error) {
	if err := in.check(); err != nil {
		return model.KnowledgeSource{}, err
	}
	now := model.Now()
	src := model.KnowledgeSource{ID: model.NewID(), OrgID: orgID, KnowledgeBaseID: kbID, DisplayName: in.DisplayName.V,
		Content: in.Content.V, MimeType: "text/plain", FileSize: int64(len(in.Content.V)), CreatedAt: now, UpdatedAt: now}
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetKnowledgeBase(ctx, orgID, kbID); err != nil {
			return err
		}
		return tx.CreateKnowledgeSource(ctx, &src)
	})
	if err != nil {
		return model.KnowledgeSource{}, err
	}
	if s.Embedder == nil && len(src.Content) <= syncIndexLimit {
		indexed := src
		if s.index(context.WithoutCancel(ctx), &indexed, false) {
			return indexed, nil
		}
	}
	s.indexLater(src)
	return src, nil
}

// GetSource returns one source of a base.
func (s *Service) GetSource(ctx context.Context, orgID, kbID, id string) (model.KnowledgeSource, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) (model.KnowledgeSource, error) {
		return tx.GetKnowledgeSource(ctx, orgID, kbID, id)
	})
}

// Sources returns a base's sources, oldest first.
func (s *Service) Sources(ctx context.Context, orgID, kbID string) ([]model.KnowledgeSource, error) {
	return store.Read(ctx, s.Store, func(tx store.Tx) ([]model.KnowledgeSource, error) {
		if _, err := tx.GetKnowledgeBase(ctx, orgID, kbID); err != nil {
			return nil, err
		}
		return tx.ListKnowledgeSources(ctx, orgID, kbID)
	})
}

// DeleteSource removes a source and its chunks.
func (s *Service) DeleteSource(ctx context.Context, orgID, kbID, id string) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return tx.DeleteKnowledgeSource(ctx, orgID, kbID, id) })
}
