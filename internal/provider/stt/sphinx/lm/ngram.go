package lm

import (
	"cmp"
	"slices"
)

const (
	bos = "<s>"  // sentence start: a context, never predicted
	eos = "</s>" // sentence end: predicted like a word
)

// none fills the unused slots of a gram.
const none = -1

// gram is an n-gram of word ids, left-aligned: a unigram is {w, none,
// none}, a bigram {v, w, none}. The context of a bigram or trigram is the
// gram of its first n-1 words.
type gram [3]int32

func uni(w int32) gram       { return gram{w, none, none} }
func bi(v, w int32) gram     { return gram{v, w, none} }
func tri(u, v, w int32) gram { return gram{u, v, w} }

// vocab numbers words in the order they are first seen.
type vocab struct {
	ids   map[string]int32
	words []string
}

func newVocab() *vocab {
	v := &vocab{ids: map[string]int32{}}
	v.id(bos)
	v.id(eos)
	return v
}

func (v *vocab) id(w string) int32 {
	if id, ok := v.ids[w]; ok {
		return id
	}
	id := int32(len(v.words))
	v.ids[w] = id
	v.words = append(v.words, w)
	return id
}

// counts are a corpus's n-gram counts: n[k] counts the (k+1)-grams.
type counts struct {
	n [3]map[gram]float64
}

// count counts the unigrams (</s> included, <s> not), bigrams and
// trigrams of sentences, each framed by <s> and </s>.
func count(v *vocab, sentences [][]string) *counts {
	c := &counts{n: [3]map[gram]float64{{}, {}, {}}}
	seq := make([]int32, 0, 64)
	for _, s := range sentences {
		if len(s) == 0 {
			continue
		}
		seq = append(seq[:0], v.id(bos))
		for _, w := range s {
			seq = append(seq, v.id(w))
		}
		seq = append(seq, v.id(eos))
		for i := 1; i < len(seq); i++ {
			c.n[0][uni(seq[i])]++
			c.n[1][bi(seq[i-1], seq[i])]++
			if i >= 2 {
				c.n[2][tri(seq[i-2], seq[i-1], seq[i])]++
			}
		}
	}
	return c
}

// model is a back-off trigram model: explicit probabilities p of the
// n-grams it holds, and the back-off weight of each context (1 when
// absent) that scales the next lower order's probability for the words a
// context has no explicit n-gram for.
type model struct {
	p   [3]map[gram]float64
	bow [2]map[gram]float64
}

func newModel() *model {
	return &model{p: [3]map[gram]float64{{}, {}, {}}, bow: [2]map[gram]float64{{}, {}}}
}

// prob is P(g's last word | its context), order being g's length (1..3),
// backing off as the ARPA format says. A word the model does not know has
// probability 0.
func (m *model) prob(g gram, order int) float64 {
	if p, ok := m.p[order-1][g]; ok {
		return p
	}
	switch order {
	case 1:
		return 0
	case 2:
		return m.weight(0, uni(g[0])) * m.p[0][uni(g[1])]
	default:
		return m.weight(1, bi(g[0], g[1])) * m.prob(bi(g[1], g[2]), 2)
	}
}

func (m *model) weight(k int, ctx gram) float64 {
	if w, ok := m.bow[k][ctx]; ok {
		return w
	}
	return 1
}

// wittenBell estimates a model from counts with interpolated Witten-Bell
// smoothing: a context seen c times with t distinct followers gives a
// follower seen k times (k + t·P_lower)/(c + t), and leaves t/(c + t) to
// the lower order, which is the back-off weight as it stands (no
// renormalisation is needed, since the lower order is this model's own).
// Unigrams are add-one over the corpus's own words, so each sums to 1 over
// the words it has seen.
func wittenBell(c *counts) *model {
	m := newModel()
	var total float64
	for _, n := range c.n[0] {
		total += n
	}
	types := float64(len(c.n[0]))
	for g, n := range c.n[0] {
		m.p[0][g] = (n + 1) / (total + types)
	}
	for k := 1; k < 3; k++ {
		ctxTotal, ctxTypes := map[gram]float64{}, map[gram]float64{}
		for g, n := range c.n[k] {
			ctx := contextOf(g, k+1)
			ctxTotal[ctx] += n
			ctxTypes[ctx]++
		}
		for g, n := range c.n[k] {
			ctx := contextOf(g, k+1)
			t := ctxTypes[ctx]
			m.p[k][g] = (n + t*m.prob(lowerOf(g, k+1), k)) / (ctxTotal[ctx] + t)
		}
		for ctx, t := range ctxTypes {
			m.bow[k-1][ctx] = t / (ctxTotal[ctx] + t)
		}
	}
	return m
}

// contextOf is the gram of the first order-1 words of g.
func contextOf(g gram, order int) gram {
	if order == 2 {
		return uni(g[0])
	}
	return bi(g[0], g[1])
}

// lowerOf is g without its first word.
func lowerOf(g gram, order int) gram {
	if order == 2 {
		return uni(g[1])
	}
	return bi(g[1], g[2])
}

// mixture linearly interpolates models with weights (summing to 1):
// P(w|h) = Σ λᵢ Pᵢ(w|h) for every n-gram any model holds, each Pᵢ backed
// off in its own model, over the union of the vocabularies; then every
// context's back-off weight is recomputed so its distribution sums to 1:
//
//	bow(h) = (1 - Σ_{w explicit after h} P(w|h)) / (1 - Σ_{same w} P_lower(w|h'))
//
// with P_lower the mixture's own lower order. The n-grams are visited in
// the order of sorted, so the floating-point sums (and the file) are the
// same on every run.
func mixture(models []*model, weights []float64, sorted func(map[gram]float64, int) []gram) *model {
	m := newModel()
	for k := range 3 {
		union := map[gram]float64{}
		for _, c := range models {
			for g := range c.p[k] {
				union[g] = 0
			}
		}
		grams := sorted(union, k+1)
		for _, g := range grams {
			var p float64
			for i, c := range models {
				p += weights[i] * c.prob(g, k+1)
			}
			m.p[k][g] = p
		}
		if k == 0 {
			continue
		}
		high, low := map[gram]float64{}, map[gram]float64{}
		var contexts []gram
		for _, g := range grams {
			ctx := contextOf(g, k+1)
			if _, ok := high[ctx]; !ok {
				contexts = append(contexts, ctx)
			}
			high[ctx] += m.p[k][g]
			low[ctx] += m.prob(lowerOf(g, k+1), k)
		}
		for _, ctx := range contexts {
			num, den := 1-high[ctx], 1-low[ctx]
			if num <= 0 || den <= 0 {
				// rounding at a context that covers (nearly) every word
				num, den = 1e-9, 1
			}
			m.bow[k-1][ctx] = num / den
		}
	}
	return m
}

// byRank sorts grams by their words' ranks (alphabetical order of the
// words), word by word: the order ARPA files are written in.
func byRank(rank []int32) func(map[gram]float64, int) []gram {
	return func(set map[gram]float64, order int) []gram {
		grams := make([]gram, 0, len(set))
		for g := range set {
			grams = append(grams, g)
		}
		slices.SortFunc(grams, func(a, b gram) int {
			for i := range order {
				if c := cmp.Compare(rank[a[i]], rank[b[i]]); c != 0 {
					return c
				}
			}
			return 0
		})
		return grams
	}
}
