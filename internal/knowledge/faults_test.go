package knowledge

import (
	"context"
	"fmt"
	"testing"

	embedopenai "github.com/parley-voice/parley/internal/provider/embed/openai"
	"github.com/parley-voice/parley/internal/provider/embed/openai/openaitest"
	"github.com/parley-voice/parley/internal/store/storefault"
)

// TestIndexingSurvivesFaults: a source's chunks or its indexed state that
// the database refuses a few times (busy, an I/O error, a full disk) land
// once it takes them, in the background (embeddings) and for a small
// source indexed within its POST alike: the source ends indexed, with no
// error, and is retrieved. On both engines.
func TestIndexingSurvivesFaults(t *testing.T) {
	ctx := context.Background()
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			fs := storefault.Wrap(open(t))
			fake := openaitest.New(t, openaitest.Options{})
			emb, _ := embedopenai.New(embedopenai.Config{BaseURL: fake.URL})
			for _, mode := range []struct {
				name string
				emb  Embedder
			}{{"in the background", emb}, {"within the request", nil}} {
				for _, op := range []string{"ReplaceKnowledgeChunks", "UpdateKnowledgeSource"} {
					for _, err := range []error{storefault.Busy, storefault.IOError, storefault.DiskFull} {
						desc := fmt.Sprintf("%s: %s: %v", mode.name, op, err)
						s := &Service{Store: fs, Embedder: mode.emb}
						orgID, kbID := newBase(t, s, corpus{})
						before := fs.Fails(op)
						fs.Inject(storefault.Rule{Op: op, Times: 2, Err: err})
						src, err := s.AddSource(ctx, orgID, kbID, text("Parking", "Parking is free for two hours with a receipt."))
						if err != nil {
							t.Fatalf("%s: %v", desc, err)
						}
						s.Wait()
						got, err := s.GetSource(ctx, orgID, kbID, src.ID)
						if err != nil {
							t.Fatal(err)
						}
						if got.ErrorMessage != nil || got.IndexedAt == nil {
							t.Errorf("%s: error %v, indexed %v", desc, deref(got.ErrorMessage), got.IndexedAt)
						}
						if n := fs.Fails(op) - before; n != 2 {
							t.Errorf("%s: the fault struck %d times, want 2", desc, n)
						}
						hits, err := s.Retrieve(ctx, orgID, []string{kbID}, "is parking free", 3, 0)
						if err != nil || len(hits) != 1 || hits[0].SourceID != src.ID {
							t.Errorf("%s: the source is not retrieved: %v %v", desc, hits, err)
						}
						fs.Clear()
					}
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
