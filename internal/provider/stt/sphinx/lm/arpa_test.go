package lm

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// arpa is an ARPA file read back: log10 probabilities and back-off weights
// by n-gram (words joined by spaces).
type arpa struct {
	counts [3]int
	prob   [3]map[string]float64
	bow    map[string]float64
	words  []string // the unigrams, in file order
}

// readARPA parses an ARPA trigram file strictly: the header's counts must
// match the sections, every n-gram's context must be an n-gram, and every
// word of an n-gram must be a unigram.
func readARPA(r io.Reader) (*arpa, error) {
	a := &arpa{prob: [3]map[string]float64{{}, {}, {}}, bow: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	section := -1 // -1 before \data\, 0 in it, k in \k-grams:
	sawEnd := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case line == `\data\`:
			section = 0
			continue
		case line == `\end\`:
			sawEnd = true
			continue
		case strings.HasPrefix(line, `\`) && strings.HasSuffix(line, "-grams:"):
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, `\`), "-grams:"))
			if err != nil || n < 1 || n > 3 {
				return nil, fmt.Errorf("bad section %q", line)
			}
			section = n
			continue
		}
		if sawEnd {
			return nil, fmt.Errorf("text after \\end\\: %q", line)
		}
		switch section {
		case -1:
			return nil, fmt.Errorf("text before \\data\\: %q", line)
		case 0:
			var n, c int
			if _, err := fmt.Sscanf(line, "ngram %d=%d", &n, &c); err != nil || n < 1 || n > 3 {
				return nil, fmt.Errorf("bad count line %q", line)
			}
			a.counts[n-1] = c
			continue
		}
		f := strings.Fields(line)
		k := section
		if len(f) != k+1 && !(k < 3 && len(f) == k+2) {
			return nil, fmt.Errorf("%d-gram line %q has %d fields", k, line, len(f))
		}
		p, err := strconv.ParseFloat(f[0], 64)
		if err != nil || p > 0 {
			return nil, fmt.Errorf("bad log probability in %q", line)
		}
		key := strings.Join(f[1:k+1], " ")
		if _, dup := a.prob[k-1][key]; dup {
			return nil, fmt.Errorf("duplicate %d-gram %q", k, key)
		}
		for _, w := range f[1 : k+1] {
			if _, ok := a.prob[0][w]; !ok && k > 1 {
				return nil, fmt.Errorf("%q: word %q is not a unigram", line, w)
			}
		}
		if k > 1 {
			if _, ok := a.prob[k-2][strings.Join(f[1:k], " ")]; !ok {
				return nil, fmt.Errorf("%q: context is not a %d-gram", line, k-1)
			}
		}
		a.prob[k-1][key] = p
		if k == 1 {
			a.words = append(a.words, key)
		}
		if len(f) == k+2 {
			b, err := strconv.ParseFloat(f[k+1], 64)
			if err != nil {
				return nil, fmt.Errorf("bad back-off in %q", line)
			}
			a.bow[key] = b
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !sawEnd {
		return nil, fmt.Errorf("no \\end\\")
	}
	for k := range 3 {
		if len(a.prob[k]) != a.counts[k] {
			return nil, fmt.Errorf("%d %d-grams, header says %d", len(a.prob[k]), k+1, a.counts[k])
		}
	}
	return a, nil
}

// p is P(w | ctx) (ctx: zero, one or two words) by ARPA back-off.
func (a *arpa) p(ctx []string, w string) float64 {
	key := strings.Join(append(append([]string(nil), ctx...), w), " ")
	if lp, ok := a.prob[len(ctx)][key]; ok {
		return math.Pow(10, lp)
	}
	if len(ctx) == 0 {
		return 0
	}
	return math.Pow(10, a.bow[strings.Join(ctx, " ")]) * a.p(ctx[1:], w)
}

// checkSums fails t unless every context's distribution over the
// vocabulary (<s> excepted) sums to 1 within tol; it returns the contexts
// checked. P(w|ctx) is the ARPA back-off, computed for every word from the
// lower order's whole distribution.
func checkSums(t *testing.T, a *arpa, tol float64) int {
	t.Helper()
	index := map[string]int{}
	for i, w := range a.words {
		index[w] = i
	}
	// explicit[k][ctx] are the words with an explicit (k+2)-gram after ctx
	explicit := [2]map[string][]int{{}, {}}
	for k := 1; k < 3; k++ {
		for key := range a.prob[k] {
			i := strings.LastIndexByte(key, ' ')
			explicit[k-1][key[:i]] = append(explicit[k-1][key[:i]], index[key[i+1:]])
		}
	}
	dist := func(lower []float64, ctx string, k int) []float64 {
		d := make([]float64, len(a.words))
		bow := math.Pow(10, a.bow[ctx])
		for i := range d {
			d[i] = bow * lower[i]
		}
		for _, i := range explicit[k][ctx] {
			d[i] = math.Pow(10, a.prob[k+1][ctx+" "+a.words[i]])
		}
		return d
	}
	unigram := make([]float64, len(a.words))
	for i, w := range a.words {
		unigram[i] = math.Pow(10, a.prob[0][w])
	}
	bad, checked := 0, 0
	check := func(ctx string, d []float64) {
		checked++
		var sum float64
		for i, p := range d {
			if a.words[i] != bos {
				sum += p
			}
		}
		if math.Abs(sum-1) > tol {
			if bad++; bad <= 5 {
				t.Errorf("context %q sums to %.6f", ctx, sum)
			}
		}
	}
	check("", unigram)
	bigram := map[string][]float64{}
	for _, v := range a.words {
		if v != eos {
			bigram[v] = dist(unigram, v, 0)
			check(v, bigram[v])
		}
	}
	for ctx := range a.prob[1] {
		if !strings.HasSuffix(ctx, " "+eos) {
			v := ctx[strings.IndexByte(ctx, ' ')+1:]
			check(ctx, dist(bigram[v], ctx, 1))
		}
	}
	return checked
}

func sentences(lines ...string) [][]string {
	var out [][]string
	for _, l := range lines {
		out = append(out, strings.Fields(l))
	}
	return out
}

func TestMixtureSumsToOne(t *testing.T) {
	v := newVocab()
	domain := count(v, sentences("i need a cleaning", "i need a crown", "is doctor patel in", "a cleaning costs ninety five dollars"))
	general := count(v, sentences("yes please", "i need to cancel", "can you repeat that", "i need a minute", "thank you bye"))
	for _, w := range [][]float64{{1, 0}, {0.5, 0.5}, {0.7, 0.3}} {
		m := mixture([]*model{wittenBell(domain), wittenBell(general)}, w, byRank(ranks(v.words)))
		var b strings.Builder
		n, err := writeARPA(&b, m, v.words, ranks(v.words))
		if err != nil {
			t.Fatal(err)
		}
		a, err := readARPA(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("weights %v: %v\n%s", w, err, b.String())
		}
		if got := a.counts[0] + a.counts[1] + a.counts[2]; got != n {
			t.Errorf("writeARPA says %d n-grams, the file has %d", n, got)
		}
		if checkSums(t, a, 1e-4) < 20 {
			t.Errorf("too few contexts checked")
		}
		// words only the general corpus has keep their probability
		if p := a.p([]string{"i", "need"}, "to"); p <= 0 {
			t.Errorf("P(to | i need) = %g with weights %v", p, w)
		}
	}
}

func TestWittenBellSumsToOne(t *testing.T) {
	v := newVocab()
	c := count(v, sentences("a b c a b d", "b c d", "a a a b"))
	m := wittenBell(c)
	var b strings.Builder
	if _, err := writeARPA(&b, m, v.words, ranks(v.words)); err != nil {
		t.Fatal(err)
	}
	a, err := readARPA(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	checkSums(t, a, 1e-5)
	// P(b | a) = (c(a b) + T(a)·P(b)) / (c(a) + T(a)): a is followed by b
	// three times and by a twice (T = 2, c = 5); P(b) = (4+1)/(16+5)
	// (16 tokens with </s>, 5 types).
	want := (3 + 2*(5.0/21)) / (5 + 2)
	if got := a.p([]string{"a"}, "b"); math.Abs(got-want) > 1e-5 {
		t.Errorf("P(b|a) = %.6f, want %.6f", got, want)
	}
}
