package knowledge

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/opt"
	embedopenai "github.com/parley-voice/parley/internal/provider/embed/openai"
	"github.com/parley-voice/parley/internal/provider/embed/openai/openaitest"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/enginetest"
)

// stores are the stores the tests run on (enginetest).
func stores(t *testing.T) map[string]func(testing.TB) store.Store {
	return enginetest.Engines(t, "knowledge")
}

type corpus struct {
	Documents []struct{ Name, Text string }
	Questions []struct{ Q, Answer string }
}

func loadCorpus(t *testing.T) corpus {
	raw, err := os.ReadFile("testdata/policies.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// newBase makes an organization and a base holding the corpus, one source
// per document.
func newBase(t *testing.T, s *Service, c corpus) (orgID, kbID string) {
	ctx := context.Background()
	org := model.Organization{Name: "acme-" + model.NewID(), ConcurrencyLimit: 1, CreatedAt: model.Now(), UpdatedAt: model.Now()}
	if err := s.Store.Update(ctx, func(tx store.Tx) error { return tx.CreateOrg(ctx, &org) }); err != nil {
		t.Fatal(err)
	}
	kb, err := s.Create(ctx, org.ID, Input{Name: opt.Value("Policies")})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Documents {
		_, err := s.AddSource(ctx, org.ID, kb.ID, SourceInput{SourceType: opt.Value("text"), DisplayName: opt.Value(d.Name), Content: opt.Value(d.Text)})
		if err != nil {
			t.Fatal(err)
		}
	}
	s.Wait() // background indexing done
	return org.ID, kb.ID
}

// topThree counts the questions whose answer's source is among the first
// three chunks.
func topThree(t *testing.T, s *Service, orgID, kbID string, c corpus) int {
	found := 0
	for _, q := range c.Questions {
		hits, err := s.Retrieve(context.Background(), orgID, []string{kbID}, q.Q, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		hit := false
		for _, h := range hits {
			names = append(names, h.DisplayName)
			hit = hit || h.DisplayName == q.Answer
			if h.Score < 0 || h.Score > 1 {
				t.Errorf("score %v out of 0..1", h.Score)
			}
		}
		if hit {
			found++
		} else {
			t.Logf("miss: %q (want %s) got %q", q.Q, q.Answer, names)
		}
	}
	return found
}

func TestRetrievalQuality(t *testing.T) {
	c := loadCorpus(t)
	for name, open := range stores(t) {
		t.Run(name+"/lexical", func(t *testing.T) {
			s := &Service{Store: open(t)}
			orgID, kbID := newBase(t, s, c)
			got := topThree(t, s, orgID, kbID, c)
			t.Logf("top 3: %d of %d", got, len(c.Questions))
			if got < 18 {
				t.Errorf("the right source is in the top 3 for %d of %d questions, want at least 18", got, len(c.Questions))
			}
		})
		t.Run(name+"/hybrid", func(t *testing.T) {
			fake := openaitest.New(t, openaitest.Options{})
			emb, err := embedopenai.New(embedopenai.Config{BaseURL: fake.URL, APIKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			s := &Service{Store: open(t), Embedder: emb}
			orgID, kbID := newBase(t, s, c)
			got := topThree(t, s, orgID, kbID, c)
			t.Logf("top 3: %d of %d", got, len(c.Questions))
			if got < 18 {
				t.Errorf("the right source is in the top 3 for %d of %d questions, want at least 18", got, len(c.Questions))
			}
			// Every chunk and every query was embedded.
			inputs := 0
			for _, r := range fake.Requests() {
				inputs += len(r.Input)
			}
			if inputs < len(c.Documents)+len(c.Questions) {
				t.Errorf("%d texts embedded", inputs)
			}
		})
	}
}
