package lm

import (
	"context"
	"testing"
)

func TestCommonList(t *testing.T) {
	words := common()
	if len(words) < 10000 {
		t.Fatalf("common.txt has %d words, want at least 10,000", len(words))
	}
	seen := map[string]bool{}
	for i, w := range words {
		if seen[w.word] {
			t.Errorf("%q is listed twice", w.word)
		}
		seen[w.word] = true
		if w.p <= 0 || w.p >= 1 {
			t.Errorf("%q has probability %g", w.word, w.p)
		}
		if i > 0 && w.p > words[i-1].p {
			t.Errorf("%q (%g) is more probable than %q before it", w.word, w.p, words[i-1].word)
		}
	}
	if words[0].word != "the" {
		t.Errorf("the most probable word is %q, want the", words[0].word)
	}
}

// TestBuildCommonWords: the common-words model brings words none of the
// texts use into the vocabulary, with a small probability, and keeps the
// model a proper distribution.
func TestBuildCommonWords(t *testing.T) {
	need(t, cmudict)
	need(t, "espeak-ng")
	plain, err := Build(context.Background(), clinic(t), t.TempDir(), Options{Weights: Weights{Domain: 0.3, Conversation: 0.7}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Build(context.Background(), clinic(t), t.TempDir(), Options{CommonWords: 5000, Weights: Weights{Domain: 0.3, Conversation: 0.7, Common: 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := readFiles(t, plain)
	a, dict := readFiles(t, f)
	checkSums(t, a, 1e-4)
	if f.Words < plain.Words+3000 || f.Words > plain.Words+5000 {
		t.Errorf("%d words with 5,000 common ones, %d without", f.Words, plain.Words)
	}
	// "election" is frequent English and in none of the corpora
	if _, ok := p.prob[0]["election"]; ok {
		t.Fatalf("election is in the model without common words: pick another test word")
	}
	if pw := a.p(nil, "election"); pw <= 0 || pw > 1e-3 {
		t.Errorf("P(election) = %g, want small and positive", pw)
	}
	if dict["election"] == nil {
		t.Errorf("election has no pronunciation")
	}
	// the domain's own words stay far more probable than the common ones
	if pd, pc := a.p([]string{"a"}, "cleaning"), a.p([]string{"a"}, "election"); pd < 100*pc {
		t.Errorf("P(cleaning | a) = %g, P(election | a) = %g", pd, pc)
	}
}
