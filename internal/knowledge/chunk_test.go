package knowledge

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitShortTextIsOneChunk(t *testing.T) {
	got := Split("  Refunds are issued within 14 days.\n\nKeep your receipt.  ")
	if len(got) != 1 || got[0] != "Refunds are issued within 14 days. Keep your receipt." {
		t.Errorf("%q", got)
	}
	if len(Split(" \n\n ")) != 0 {
		t.Error("blank text gave chunks")
	}
}

func TestSplitLongTextOverlapsOnSentences(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		b.WriteString("Sentence number ")
		b.WriteString(strings.Repeat("x", i%7+3))
		b.WriteString(" talks about policy item ")
		b.WriteString(string(rune('A' + i%26)))
		b.WriteString(". ")
	}
	chunks := Split(b.String())
	if len(chunks) < 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c); n > ChunkMax {
			t.Errorf("chunk %d has %d runes", i, n)
		}
		if !strings.HasSuffix(c, ".") || !strings.HasPrefix(c, "Sentence") {
			t.Errorf("chunk %d does not end on a sentence: %q", i, c)
		}
		if i > 0 {
			prev := sentences(chunks[i-1])
			if !strings.HasPrefix(c, prev[len(prev)-1]) {
				t.Errorf("chunk %d does not start with the previous chunk's last sentence", i)
			}
		}
	}
}

func TestSplitKeepsAbbreviationsAndNumbers(t *testing.T) {
	got := sentences("Pay e.g. by card. The fee is 3.5 percent! Is that ok? yes it is.")
	want := []string{"Pay e.g. by card.", "The fee is 3.5 percent!", "Is that ok? yes it is."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q", got)
	}
}

func TestSplitCutsAWallOfText(t *testing.T) {
	wall := strings.Repeat("word ", 1000) // one 5000-character "sentence"
	for i, c := range Split(wall) {
		if n := utf8.RuneCountInString(c); n > ChunkMax || n == 0 {
			t.Errorf("chunk %d has %d runes", i, n)
		}
	}
}

func TestSplitStartsAParagraphThatDoesNotFit(t *testing.T) {
	p1 := strings.Repeat("Alpha beta gamma. ", 20)   // ~360 runes
	p2 := strings.Repeat("Delta epsilon zeta. ", 40) // ~800 runes
	chunks := Split(p1 + "\n\n" + p2)
	if !strings.HasPrefix(chunks[0], "Alpha") || strings.Contains(chunks[0], "Delta") {
		t.Errorf("first chunk mixes paragraphs: %q", chunks[0])
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Hello. World!\n\nNew paragraph? Yes.")
	f.Add(strings.Repeat("é", 3000))
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range Split(s) {
			if utf8.RuneCountInString(c) > ChunkMax || strings.TrimSpace(c) == "" {
				t.Fatalf("bad chunk %q", c)
			}
		}
	})
}
