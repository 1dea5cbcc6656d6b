package lm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchmarkSets are the recognition benchmark's sentences (its test set)
// and the held-out sentences `adapt tune` measures options on, relative to
// this package: the corpus must not learn from either.
var benchmarkSets = []string{
	"../../../../../bench/wer/testdata/dental/callers.txt",
	"../../../../../bench/wer/testdata/everyday.txt",
	"../adapt/testdata/dental-heldout.txt",
}

func TestConversationIsNotTheBenchmark(t *testing.T) {
	ours := map[string]bool{}
	for _, s := range conversation() {
		ours[strings.Join(s, " ")] = true
	}
	checked := 0
	for _, name := range benchmarkSets {
		b, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			checked++
			for _, s := range Sentences(line) {
				// one-word answers ("yes") are everyone's; a sentence is copied
				if len(s) > 2 && ours[strings.Join(s, " ")] {
					t.Errorf("conversation.txt holds the benchmark's %q (%s)", strings.Join(s, " "), name)
				}
			}
		}
	}
	if checked < 130 {
		t.Errorf("read only %d benchmark sentences", checked)
	}
}

func TestConversationSize(t *testing.T) {
	lines := 0
	for _, l := range strings.Split(conversationText, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines++
		}
	}
	if lines < 4000 {
		t.Errorf("conversation.txt has %d sentences, want 4000 or more", lines)
	}
}

// TestConversationInBaseDict checks the corpus needs no guessed
// pronunciation: every word is in CMUdict.
func TestConversationInBaseDict(t *testing.T) {
	need(t, cmudict)
	words := map[string]struct{}{}
	for _, s := range conversation() {
		for _, w := range s {
			words[w] = struct{}{}
		}
	}
	prons, err := lookup(cmudict, words)
	if err != nil {
		t.Fatal(err)
	}
	for w := range words {
		if _, ok := prons[w]; !ok {
			t.Errorf("%q is not in %s", w, cmudict)
		}
	}
	t.Logf("%d sentences, %d distinct words", len(conversation()), len(words))
}
