package lm

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clinic is the test agent's texts: testdata/clinic.txt, a paragraph a text
// (as an agent's prompt, nodes and knowledge sources are separate texts).
func clinic(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/clinic.txt")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, p := range strings.Split(string(b), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			texts = append(texts, p)
		}
	}
	return texts
}

func readFiles(t *testing.T, f Files) (*arpa, map[string][]string) {
	t.Helper()
	lm, err := os.Open(f.LM)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Close()
	a, err := readARPA(lm)
	if err != nil {
		t.Fatalf("%s does not parse: %v", f.LM, err)
	}
	b, err := os.ReadFile(f.Dict)
	if err != nil {
		t.Fatal(err)
	}
	dict := map[string][]string{}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		head, pron, ok := strings.Cut(line, " ")
		if !ok || !knownPhones(pron) {
			t.Errorf("dictionary line %q: want a word and known phones", line)
		}
		word, _, _ := strings.Cut(head, "(")
		dict[word] = append(dict[word], pron)
	}
	return a, dict
}

func TestBuild(t *testing.T) {
	need(t, cmudict)
	need(t, "espeak-ng")
	texts := append(clinic(t), "Ask about 日本 travel plans.")
	f, err := Build(context.Background(), texts, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, dict := readFiles(t, f)
	if f.NGrams != a.counts[0]+a.counts[1]+a.counts[2] {
		t.Errorf("Files.NGrams = %d, the file has %v", f.NGrams, a.counts)
	}
	if f.Words != len(dict) || f.Words != a.counts[0]-2 {
		t.Errorf("Files.Words = %d; the dictionary has %d words, the model %d unigrams with <s> and </s>", f.Words, len(dict), a.counts[0])
	}
	for _, w := range a.words {
		if _, ok := dict[w]; !ok && w != bos && w != eos {
			t.Errorf("%q is in the model but not the dictionary", w)
		}
	}
	for w, want := range map[string]string{
		"zorbly": "Z AO R B L IY", "acmedent": "AE K M IH D AH N T", // guessed by espeak-ng
		"crown": "K R AW N", // from CMUdict
	} {
		if got := strings.Join(dict[w], ", "); got != want {
			t.Errorf("dictionary: %s %q, want %q", w, got, want)
		}
	}
	for _, w := range []string{"okonkwo", "lindqvist", "harborviewdental", "invisalign", "seven", "thirty", "a", "m"} {
		if dict[w] == nil {
			t.Errorf("%q is missing from the dictionary", w)
		}
	}
	if dict["日本"] != nil {
		t.Errorf("a word in another script has a pronunciation: %q", dict["日本"])
	}
	// the word without a pronunciation cut its sentence: "about travel" was never written
	if _, ok := a.prob[1]["about travel"]; ok {
		t.Errorf("the bigram around a dropped word was kept")
	}
	if _, ok := a.prob[1]["<s> ask"]; !ok {
		t.Errorf("the model lacks the domain bigram <s> ask")
	}
	n := checkSums(t, a, 1e-4)
	t.Logf("%d words, %d n-grams %v, %d contexts sum to 1", f.Words, f.NGrams, a.counts, n)

	// the domain raises its own words over the conversation corpus alone
	gen, err := Build(context.Background(), nil, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, _ := readFiles(t, gen)
	if pd, pg := a.p([]string{"a"}, "cleaning"), g.p([]string{"a"}, "cleaning"); pd <= pg {
		t.Errorf("P(cleaning | a) = %.4f with the domain, %.4f without", pd, pg)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	need(t, cmudict)
	need(t, "espeak-ng")
	var lms, dicts [][]byte
	for range 2 {
		f, err := Build(context.Background(), clinic(t), t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		lm, _ := os.ReadFile(f.LM)
		dict, _ := os.ReadFile(f.Dict)
		lms, dicts = append(lms, lm), append(dicts, dict)
	}
	if !bytes.Equal(lms[0], lms[1]) || !bytes.Equal(dicts[0], dicts[1]) {
		t.Errorf("two builds from the same texts differ")
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := Build(context.Background(), []string{"hello"}, t.TempDir(), Options{BaseDict: "/nonexistent.dict"}); err == nil {
		t.Errorf("Build with a missing base dictionary succeeded")
	}
	if _, err := Build(context.Background(), []string{"hello"}, t.TempDir(), Options{Weights: Weights{Domain: -1, Conversation: 1}}); err == nil {
		t.Errorf("Build with a negative weight succeeded")
	}
	need(t, cmudict)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, []string{"Zorbly and Acmedent"}, t.TempDir(), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Build with a canceled context: %v, want context.Canceled", err)
	}
	dir := t.TempDir()
	if _, err := Build(context.Background(), []string{"Zorbly"}, dir, Options{Espeak: filepath.Join(dir, "no-espeak")}); err == nil {
		t.Errorf("Build without espeak-ng for a word CMUdict lacks succeeded")
	}
}

// TestDefaultWeights measures the perplexity of sentences callers say to
// the test clinic (in its domain) and to any business (general), for
// models built with a range of domain weights, and checks the default is
// within 5% of the best on both sets together.
func TestDefaultWeights(t *testing.T) {
	need(t, cmudict)
	need(t, "espeak-ng")
	b, err := os.ReadFile("testdata/dev.txt")
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if kind, text, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, "#") {
			sets[kind] = append(sets[kind], Sentences(text)...)
		}
	}
	best, atDefault := math.Inf(1), 0.0
	for _, w := range []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9} {
		f, err := Build(context.Background(), clinic(t), t.TempDir(), Options{Weights: Weights{Domain: w, Conversation: 1 - w}})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := readFiles(t, f)
		pd, oovD := perplexity(a, sets["domain"])
		pg, oovG := perplexity(a, sets["general"])
		both := math.Sqrt(pd * pg)
		t.Logf("domain weight %.1f: perplexity in domain %6.1f, general %6.1f, geometric mean %6.1f (oov %d, %d)", w, pd, pg, both, oovD, oovG)
		best = min(best, both)
		if w == DefaultDomainWeight/(DefaultDomainWeight+DefaultConversationWeight) {
			atDefault = both
		}
	}
	if atDefault == 0 || atDefault > 1.05*best {
		t.Errorf("default weights give perplexity %.1f, the best %.1f", atDefault, best)
	}
}

// perplexity is 10^(-Σ log10 P / N) over the words (</s> included) of
// sentences, skipping words the model lacks (returned as oov).
func perplexity(a *arpa, sentences [][]string) (float64, int) {
	var logSum float64
	var n, oov int
	for _, s := range sentences {
		ctx := []string{bos}
		for _, w := range append(append([]string(nil), s...), eos) {
			if _, ok := a.prob[0][w]; !ok {
				oov++
				ctx = []string{bos}
				continue
			}
			logSum += math.Log10(a.p(ctx, w))
			n++
			ctx = append(ctx, w)
			if len(ctx) > 2 {
				ctx = ctx[len(ctx)-2:]
			}
		}
	}
	return math.Pow(10, -logSum/float64(n)), oov
}
