package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/store"
)

// syncIndexLimit is the largest source indexed within its POST (bytes):
// chunking and the full-text index of 20 KB take milliseconds. Larger
// sources, and every source when embeddings must be fetched, are indexed
// in the background.
const syncIndexLimit = 20_000

// indexTimeout bounds indexing one source (embedding 100,000 characters is
// a few dozen requests).
const indexTimeout = 5 * time.Minute

// Embedder turns texts into vectors (provider/embed.Embedder).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// index chunks the source, embeds the chunks when an embedder is set and
// replaces the source's chunks; then it records the outcome on the source.
// Indexing twice gives the same chunks.
func (s *Service) index(ctx context.Context, src *model.KnowledgeSource) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), indexTimeout)
	defer cancel()
	texts := Split(src.Content)
	chunks := make([]model.KnowledgeChunk, len(texts))
	for i, t := range texts {
		chunks[i] = model.KnowledgeChunk{SourceID: src.ID, Seq: i, Text: t}
	}
	var failure error
	if s.Embedder != nil && len(texts) > 0 {
		vectors, err := s.Embedder.Embed(ctx, texts)
		switch {
		case err != nil:
			failure = fmt.Errorf("embedding failed: %w", err)
		case len(vectors) != len(texts):
			failure = fmt.Errorf("embedding failed: %d vectors for %d chunks", len(vectors), len(texts))
		default:
			for i := range chunks {
				chunks[i].Embedding = vectors[i]
			}
		}
	}
	if failure == nil {
		failure = s.Store.Update(ctx, func(tx store.Tx) error {
			return tx.ReplaceKnowledgeChunks(ctx, src.OrgID, src.KnowledgeBaseID, src.ID, chunks)
		})
	}
	now := model.Now()
	src.UpdatedAt = now
	if failure != nil {
		msg := "indexing failed: " + failure.Error()
		src.ErrorMessage, src.IndexedAt = &msg, nil
		s.log().Error("knowledge source not indexed", "source_id", src.ID, "err", failure)
	} else {
		src.ErrorMessage, src.IndexedAt = nil, &now
	}
	err := s.Store.Update(ctx, func(tx store.Tx) error { return tx.UpdateKnowledgeSource(ctx, src) })
	if err != nil && !errors.Is(err, store.ErrNotFound) { // deleted meanwhile: nothing to record
		s.log().Error("knowledge source state not saved", "source_id", src.ID, "err", err)
	}
}

// indexLater indexes the source on a background goroutine that Close waits
// for.
func (s *Service) indexLater(src model.KnowledgeSource) {
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		s.index(context.Background(), &src)
	}()
}

// Close waits for background indexing to finish.
func (s *Service) Close() { s.tasks.Wait() }
