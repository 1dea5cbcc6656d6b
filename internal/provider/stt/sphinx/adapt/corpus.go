package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/parley-voice/parley/bench/wer"
)

// readLines reads the non-empty lines of path that are not # comments.
func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// dictionary is the words of a pocketsphinx dictionary (alternative
// pronunciations "word(2)" folded into "word").
type dictionary map[string]bool

func readDictionary(path string) (dictionary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := dictionary{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w, _, _ := strings.Cut(sc.Text(), " ")
		if i := strings.IndexByte(w, '('); i > 0 {
			w = w[:i]
		}
		d[w] = true
	}
	return d, sc.Err()
}

// sentence is one training sentence: as written (for the voices) and as
// the words bw aligns (normalised as the benchmark normalises).
type sentence struct {
	text, words string
}

// trainingSentences normalises texts and keeps those whose every word
// the dictionary has (bw cannot align a word it has no pronunciation for).
func trainingSentences(texts []string, d dictionary) (kept []sentence, dropped []string) {
	for _, t := range texts {
		words := wer.Normalise(t)
		ok := words != ""
		for _, w := range strings.Fields(words) {
			if !d[w] {
				ok = false
			}
		}
		if !ok {
			dropped = append(dropped, t)
			continue
		}
		kept = append(kept, sentence{text: t, words: words})
	}
	return kept, dropped
}

// transcriptLine is a line of bw's -lsnfn file.
func transcriptLine(words, id string) string {
	return fmt.Sprintf("<s> %s </s> (%s)\n", words, id)
}
