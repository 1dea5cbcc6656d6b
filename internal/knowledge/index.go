package knowledge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/persist"
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
// Indexing twice gives the same chunks. With retry (background indexing)
// a write the database does not take is retried (persist); without (within
// a request), it is tried once. It says whether the outcome is recorded:
// false leaves the source pending (no indexedAt, no errorMessage), for the
// background (AddSource) or the next start (Resume) to index again.
func (s *Service) index(ctx context.Context, src *model.KnowledgeSource, retry bool) bool {
	ectx, cancel := context.WithTimeout(ctx, indexTimeout)
	defer cancel()
	texts := Split(src.Content)
	chunks := make([]model.KnowledgeChunk, len(texts))
	for i, t := range texts {
		chunks[i] = model.KnowledgeChunk{SourceID: src.ID, Seq: i, Text: t}
	}
	var failure error
	if s.Embedder != nil && len(texts) > 0 {
		vectors, err := s.Embedder.Embed(ectx, texts)
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
	write := func(what string, fn func(ctx context.Context, tx store.Tx) error) error {
		once := func(ctx context.Context) error {
			return s.Store.Update(ctx, func(tx store.Tx) error { return fn(ctx, tx) })
		}
		if !retry {
			return once(ctx)
		}
		return s.Writes.Do(ctx, what, once)
	}
	if failure == nil {
		failure = write("knowledge chunks", func(ctx context.Context, tx store.Tx) error {
			return tx.ReplaceKnowledgeChunks(ctx, src.OrgID, src.KnowledgeBaseID, src.ID, chunks)
		})
		if failure != nil && !retry && !persist.IsPermanent(failure) {
			return false // the database is away: the background retries
		}
	}
	if failure != nil && s.stopping() {
		return false // shutting down: left pending, for Resume after the restart
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
	err := write("knowledge source state", func(ctx context.Context, tx store.Tx) error { return tx.UpdateKnowledgeSource(ctx, src) })
	switch {
	case err == nil || errors.Is(err, store.ErrNotFound): // deleted meanwhile: nothing to record
		return true
	case retry:
		s.log().Error("knowledge source state not saved: it stays pending, for the next start to index again", "source_id", src.ID, "err", err)
	}
	return false
}

// indexLater indexes the source on a background goroutine that Close
// stops and waits for.
func (s *Service) indexLater(src model.KnowledgeSource) {
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		s.index(s.background(), &src, true)
	}()
}

// background is the context of background indexing, canceled by Close.
func (s *Service) background() context.Context {
	s.once.Do(func() { s.base, s.cancel = context.WithCancel(context.Background()) })
	return s.base
}

func (s *Service) stopping() bool { return s.background().Err() != nil }

// Close stops background indexing and waits for it; sources it did not
// finish stay pending (no indexedAt, no errorMessage) for Resume.
func (s *Service) Close() {
	s.background()
	s.cancel()
	s.tasks.Wait()
}

// Wait waits for background indexing to finish.
func (s *Service) Wait() { s.tasks.Wait() }

// Resume indexes, in the background, the sources whose indexing a stopped
// server left unfinished; serve calls it on start. Indexing is idempotent,
// so a source another server is indexing at the same time ends the same.
func (s *Service) Resume(ctx context.Context) error {
	pending, err := store.Read(ctx, s.Store, func(tx store.Tx) ([]model.KnowledgeSource, error) {
		return tx.PendingKnowledgeSources(ctx, 10_000)
	})
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		s.log().Info("indexing knowledge sources left unfinished", "sources", len(pending))
	}
	s.tasks.Add(1)
	go func() {
		defer s.tasks.Done()
		for i := range pending {
			if s.stopping() {
				return
			}
			s.index(s.background(), &pending[i], true)
		}
	}()
	return nil
}
