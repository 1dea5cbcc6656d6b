package knowledge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parley-voice/parley/internal/opt"
	embedopenai "github.com/parley-voice/parley/internal/provider/embed/openai"
	"github.com/parley-voice/parley/internal/provider/embed/openai/openaitest"
)

func text(name, content string) SourceInput {
	return SourceInput{SourceType: opt.Value("text"), DisplayName: opt.Value(name), Content: opt.Value(content)}
}

func TestIndexingOutcomes(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			c := corpus{}
			t.Run("an embeddings failure is the source's errorMessage", func(t *testing.T) {
				fake := openaitest.New(t, openaitest.Options{Fail: 500})
				emb, _ := embedopenai.New(embedopenai.Config{BaseURL: fake.URL})
				s := &Service{Store: st, Embedder: emb}
				orgID, kbID := newBase(t, s, c)
				src, err := s.AddSource(ctx, orgID, kbID, text("Refunds", "Refunds take five days."))
				if err != nil {
					t.Fatal(err)
				}
				s.Wait()
				got, err := s.GetSource(ctx, orgID, kbID, src.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.ErrorMessage == nil || !strings.HasPrefix(*got.ErrorMessage, "indexing failed: embedding failed:") || got.IndexedAt != nil {
					t.Errorf("source after a failed embedding: error %v, indexed %v", got.ErrorMessage, got.IndexedAt)
				}
			})
			t.Run("a stop leaves sources pending and Resume indexes them", func(t *testing.T) {
				fake := openaitest.New(t, openaitest.Options{Delay: 2 * time.Second})
				emb, _ := embedopenai.New(embedopenai.Config{BaseURL: fake.URL})
				s := &Service{Store: st, Embedder: emb}
				orgID, kbID := newBase(t, s, c)
				src, err := s.AddSource(ctx, orgID, kbID, text("Parking", "Parking is free for two hours with a receipt."))
				if err != nil {
					t.Fatal(err)
				}
				s.Close() // the server stops while the chunks are being embedded
				got, _ := s.GetSource(ctx, orgID, kbID, src.ID)
				if got.ErrorMessage != nil || got.IndexedAt != nil {
					t.Fatalf("after the stop: error %v, indexed %v", got.ErrorMessage, got.IndexedAt)
				}
				restarted := &Service{Store: st, Embedder: emb}
				if err := restarted.Resume(ctx); err != nil {
					t.Fatal(err)
				}
				restarted.Wait()
				got, _ = restarted.GetSource(ctx, orgID, kbID, src.ID)
				if got.ErrorMessage != nil || got.IndexedAt == nil {
					t.Fatalf("after Resume: error %v, indexed %v", got.ErrorMessage, got.IndexedAt)
				}
				hits, err := restarted.Retrieve(ctx, orgID, []string{kbID}, "is parking free", 3, 0)
				if err != nil || len(hits) != 1 || hits[0].SourceID != src.ID {
					t.Errorf("after Resume the source is not retrieved: %v %v", hits, err)
				}
			})
		})
	}
}
