package lm

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// lookup reads the pronunciations of words from a cmudict-format
// dictionary ("word PH PH ..." and "word(2) PH ..." for variants), in the
// file's order. Words it does not hold are absent from the answer.
func lookup(path string, words map[string]struct{}) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("base dictionary: %w", err)
	}
	defer f.Close()
	return readDict(f, words)
}

func readDict(r io.Reader, words map[string]struct{}) (map[string][]string, error) {
	prons := map[string][]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := sc.Bytes()
		head, phones, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			continue
		}
		word := head
		if i := bytes.IndexByte(head, '('); i > 0 && bytes.HasSuffix(head, []byte(")")) {
			word = head[:i]
		}
		if _, want := words[string(word)]; !want { // no allocation: the compiler reads the bytes in place
			continue
		}
		if p := strings.Join(strings.Fields(string(phones)), " "); p != "" && knownPhones(p) {
			prons[string(word)] = append(prons[string(word)], p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("base dictionary: %w", err)
	}
	return prons, nil
}

// phones are the en-us acoustic model's context-independent phones (its
// mdef) that a dictionary may use: the 39 of CMUdict; SIL is the model's
// silence and only fillers use it.
var phones = func() map[string]struct{} {
	set := map[string]struct{}{}
	for _, p := range strings.Fields("AA AE AH AO AW AY B CH D DH EH ER EY F G HH IH IY JH K L M N NG OW OY P R S SH T TH UH UW V W Y Z ZH") {
		set[p] = struct{}{}
	}
	return set
}()

// knownPhones reports whether every phone of a pronunciation is one the
// model has: pocketsphinx refuses a dictionary with any other.
func knownPhones(pron string) bool {
	for _, p := range strings.Fields(pron) {
		if _, ok := phones[p]; !ok {
			return false
		}
	}
	return pron != ""
}

// writeDict writes one line per pronunciation, words in sorted order,
// variants numbered as cmudict does ("word(2)").
func writeDict(w io.Writer, prons map[string][]string) error {
	words := make([]string, 0, len(prons))
	for word := range prons {
		words = append(words, word)
	}
	slices.Sort(words)
	b := bufio.NewWriterSize(w, 1<<16)
	for _, word := range words {
		for i, p := range prons[word] {
			if i == 0 {
				fmt.Fprintf(b, "%s %s\n", word, p)
			} else {
				fmt.Fprintf(b, "%s(%d) %s\n", word, i+1, p)
			}
		}
	}
	return b.Flush()
}
