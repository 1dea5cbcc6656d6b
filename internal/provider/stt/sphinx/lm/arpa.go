package lm

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// noProb is the log10 probability ARPA files give <s>, which is never
// predicted.
const noProb = -99

// writeARPA writes m in the ARPA text format pocketsphinx reads with -lm:
// the counts, then each order's n-grams sorted by word (log10 probability,
// words, and for a context its log10 back-off weight). words are the
// vocabulary by id, rank each id's alphabetical rank. It returns the
// number of n-grams written.
func writeARPA(w io.Writer, m *model, words []string, rank []int32) (int, error) {
	sorted := byRank(rank)
	var grams [3][]gram
	unigrams := map[gram]float64{}
	for g := range m.p[0] {
		unigrams[g] = 0
	}
	for id, word := range words {
		if word == bos {
			unigrams[uni(int32(id))] = 0
		}
	}
	grams[0] = sorted(unigrams, 1)
	grams[1] = sorted(m.p[1], 2)
	grams[2] = sorted(m.p[2], 3)

	b := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(b, "\\data\\\nngram 1=%d\nngram 2=%d\nngram 3=%d\n", len(grams[0]), len(grams[1]), len(grams[2]))
	var line []byte
	for k := range 3 {
		fmt.Fprintf(b, "\n\\%d-grams:\n", k+1)
		for _, g := range grams[k] {
			line = line[:0]
			if p, ok := m.p[k][g]; ok {
				line = logTo(line, p)
			} else {
				line = strconv.AppendInt(line, noProb, 10)
			}
			for i := range k + 1 {
				line = append(line, ' ')
				line = append(line, words[g[i]]...)
			}
			if k < 2 {
				if bow, ok := m.bow[k][g]; ok {
					line = append(line, ' ')
					line = logTo(line, bow)
				}
			}
			line = append(line, '\n')
			b.Write(line)
		}
	}
	b.WriteString("\n\\end\\\n")
	return len(grams[0]) + len(grams[1]) + len(grams[2]), b.Flush()
}

// logTo appends log10(p) with 6 decimals (what SRILM and the CMU toolkit
// write): a relative error under 2e-6 per probability.
func logTo(b []byte, p float64) []byte {
	l := math.Log10(p)
	if l < noProb {
		l = noProb
	}
	if l == 0 {
		l = 0 // not -0.000000
	}
	return strconv.AppendFloat(b, l, 'f', 6, 64)
}

// ranks gives each word id its rank in the alphabetical order of words.
func ranks(words []string) []int32 {
	ids := make([]int32, len(words))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(words[a], words[b]) })
	rank := make([]int32, len(words))
	for r, id := range ids {
		rank[id] = int32(r)
	}
	return rank
}
