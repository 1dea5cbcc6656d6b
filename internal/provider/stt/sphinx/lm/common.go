package lm

import (
	_ "embed"
	"math"
	"strconv"
	"strings"
	"sync"
)

//go:embed common.txt
var commonText string

// commonWord is one word of common.txt with its probability in the
// generic model.
type commonWord struct {
	word string
	p    float64
}

// common is the embedded list of frequent English words (common.txt),
// most probable first, read once. Callers must not modify it.
var common = sync.OnceValue(func() []commonWord {
	var out []commonWord
	for _, line := range strings.Split(commonText, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		lp, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		out = append(out, commonWord{f[0], math.Pow(10, lp)})
	}
	return out
})

// commonModel is a unigram model of the first n common words (n <= 0: all) that have a
// pronunciation, their probabilities scaled to sum to 1: mixed in with a
// small weight, it lets the decoder say a frequent word the agent's texts
// and the conversation corpus never use, instead of the nearest word
// they do.
func commonModel(v *vocab, n int, prons map[string][]string) *model {
	m := newModel()
	var sum float64
	for _, w := range common() {
		if n > 0 && len(m.p[0]) == n {
			break
		}
		if _, ok := prons[w.word]; !ok {
			continue
		}
		m.p[0][uni(v.id(w.word))] = w.p
		sum += w.p
	}
	for g, p := range m.p[0] {
		m.p[0][g] = p / sum
	}
	return m
}

// commonSentences are the first n common words (n <= 0: all) as one-word sentences,
// for looking up their pronunciations.
func commonSentences(n int) [][]string {
	var out [][]string
	for _, w := range common() {
		if n > 0 && len(out) == n {
			break
		}
		out = append(out, []string{w.word})
	}
	return out
}
