package lm

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// DefaultBaseDict is the dictionary of Debian's pocketsphinx-en-us.
const DefaultBaseDict = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"

// Default interpolation weights (see the package documentation for how
// they were chosen).
const (
	DefaultDomainWeight       = 0.3
	DefaultConversationWeight = 0.7
	DefaultCommonWeight       = 0.1
	// DefaultCommonWords is how many common words the common-words model
	// holds: all of common.txt.
	DefaultCommonWords = 10000
)

// File names Build writes under its directory.
const (
	LMFile   = "domain.lm"
	DictFile = "domain.dict"
)

// Files are what Build wrote.
type Files struct {
	LM     string // the trigram model, ARPA text (pocketsphinx -lm)
	Dict   string // the pronunciation dictionary (pocketsphinx -dict)
	Words  int    // words in the dictionary (and the model, <s> and </s> aside)
	NGrams int    // n-grams in the model, all orders
}

// Options tune Build; the zero value takes the defaults.
type Options struct {
	// BaseDict is a cmudict-format dictionary to take pronunciations
	// from; default DefaultBaseDict.
	BaseDict string
	// Espeak is the espeak-ng command that guesses the pronunciation of
	// words BaseDict lacks; default "espeak-ng" in PATH.
	Espeak string
	// Weights are the interpolation weights of the models.
	Weights Weights
	// CommonWords is how many of the generic model's most probable words
	// the common-words model holds (Weights.Common); default
	// DefaultCommonWords.
	CommonWords int
}

// Weights are the relative weights of the domain model (from the texts),
// the conversation model (the embedded corpus) and the common-words
// model in the interpolated model; they are scaled to sum to 1. All zero
// means the defaults.
type Weights struct {
	Domain       float64
	Conversation float64
	// Common weighs a unigram model of frequent English words
	// (common.go); 0 leaves them out.
	Common float64
}

func (o Options) withDefaults() Options {
	if o.BaseDict == "" {
		o.BaseDict = DefaultBaseDict
	}
	if o.Espeak == "" {
		o.Espeak = DefaultEspeak
	}
	if o.Weights == (Weights{}) {
		o.Weights = Weights{DefaultDomainWeight, DefaultConversationWeight, DefaultCommonWeight}
	}
	if o.CommonWords <= 0 {
		o.CommonWords = DefaultCommonWords
	}
	return o
}

// Build writes, under dir, a trigram language model (ARPA) and a
// pronunciation dictionary for conversations about texts (the agent's
// prompt, first message, flow nodes, knowledge, ...), interpolated with a
// general conversational corpus. It returns the two files' paths. The same
// inputs give the same bytes, so a cache keyed by the texts is exact. Each
// file is written under a temporary name and renamed into place, so a
// reader never sees half of one; two builds into one dir at once must be
// of the same texts, or the model and dictionary may come from different
// builds.
func Build(ctx context.Context, texts []string, dir string, opt Options) (Files, error) {
	opt = opt.withDefaults()
	if opt.Weights.Domain < 0 || opt.Weights.Conversation < 0 || opt.Weights.Common < 0 {
		return Files{}, fmt.Errorf("lm: negative weight %+v", opt.Weights)
	}
	var domain [][]string
	for _, t := range texts {
		domain = append(domain, Sentences(t)...)
	}
	general := conversation()

	var commons [][]string
	if opt.Weights.Common > 0 {
		commons = commonSentences(opt.CommonWords)
	}
	prons, err := pronounce(ctx, opt, domain, general, commons)
	if err != nil {
		return Files{}, err
	}
	domain = keepPronounced(domain, prons)
	general = keepPronounced(general, prons)
	if err := ctx.Err(); err != nil {
		return Files{}, err
	}

	v := newVocab()
	dc, gc := count(v, domain), count(v, general)
	total := opt.Weights.Domain + opt.Weights.Conversation + opt.Weights.Common
	var models []*model
	var weights []float64
	for _, c := range []struct {
		c *counts
		w float64
	}{{dc, opt.Weights.Domain / total}, {gc, opt.Weights.Conversation / total}} {
		if c.w > 0 && len(c.c.n[0]) > 0 {
			models = append(models, wittenBell(c.c))
			weights = append(weights, c.w)
		}
	}
	if opt.Weights.Common > 0 {
		models = append(models, commonModel(v, opt.CommonWords, prons))
		weights = append(weights, opt.Weights.Common/total)
	}
	if len(models) == 0 {
		return Files{}, errors.New("lm: no words to model")
	}
	if len(models) == 1 {
		weights[0] = 1
	}
	rank := ranks(v.words)
	m := mixture(models, weights, byRank(rank))
	if err := ctx.Err(); err != nil {
		return Files{}, err
	}

	inLM := map[string][]string{}
	for g := range m.p[0] {
		if w := v.words[g[0]]; w != bos && w != eos {
			inLM[w] = prons[w]
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, fmt.Errorf("lm: %w", err)
	}
	f := Files{LM: filepath.Join(dir, LMFile), Dict: filepath.Join(dir, DictFile), Words: len(inLM)}
	err = writeFile(f.LM, func(w io.Writer) error {
		n, err := writeARPA(w, m, v.words, rank)
		f.NGrams = n
		return err
	})
	if err != nil {
		return Files{}, err
	}
	if err := writeFile(f.Dict, func(w io.Writer) error { return writeDict(w, inLM) }); err != nil {
		return Files{}, err
	}
	return f, nil
}

// pronounce finds every word's pronunciations: BaseDict's, else a guess
// from espeak-ng. Words with neither are absent from the answer.
func pronounce(ctx context.Context, opt Options, corpora ...[][]string) (map[string][]string, error) {
	words := map[string]struct{}{}
	for _, c := range corpora {
		for _, s := range c {
			for _, w := range s {
				words[w] = struct{}{}
			}
		}
	}
	prons, err := lookup(opt.BaseDict, words)
	if err != nil {
		return nil, fmt.Errorf("lm: %w", err)
	}
	var missing []string
	for w := range words {
		if _, ok := prons[w]; !ok {
			missing = append(missing, w)
		}
	}
	slices.Sort(missing)
	guessed, err := guess(ctx, opt.Espeak, missing)
	if err != nil {
		return nil, fmt.Errorf("lm: %w", err)
	}
	for w, p := range guessed {
		prons[w] = []string{p}
	}
	return prons, nil
}

// keepPronounced cuts each sentence at the words without a pronunciation:
// the decoder cannot say them, and joining their neighbours would invent
// n-grams nobody wrote.
func keepPronounced(sentences [][]string, prons map[string][]string) [][]string {
	out := make([][]string, 0, len(sentences))
	for _, s := range sentences {
		start := 0
		for i, w := range s {
			if _, ok := prons[w]; !ok {
				if i > start {
					out = append(out, s[start:i])
				}
				start = i + 1
			}
		}
		if start < len(s) {
			out = append(out, s[start:])
		}
	}
	return out
}

// writeFile writes path through a temporary file renamed into place, so a
// reader never sees half a file.
func writeFile(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return fmt.Errorf("lm: %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("lm: %w", err)
	}
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("lm: %w", err)
	}
	return nil
}

//go:embed conversation.txt
var conversationText string

// conversation is the embedded general corpus (conversation.txt): short
// sentences a caller says to any business on the phone, as spoken words,
// read once. Callers must not modify it.
var conversation = sync.OnceValue(func() [][]string {
	var out [][]string
	for _, line := range strings.Split(conversationText, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, Sentences(line)...)
		}
	}
	return out
})
