package knowledge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunk sizes, in characters (runes). A chunk is a few sentences: small
// enough that a handful fit a voice agent's prompt and a retrieved chunk is
// about one thing, large enough to carry its context. Consecutive chunks of
// a paragraph overlap by their boundary sentence (up to ChunkOverlap), so
// an answer that straddles two chunks is whole in one of them. Paragraphs
// (blank-line separated) are never merged into one chunk's middle: a chunk
// ends at a paragraph's end when the next paragraph would not fit.
const (
	ChunkTarget  = 600  // a chunk is closed once it reaches this
	ChunkMax     = 1000 // and never exceeds this (long sentences are cut at spaces)
	ChunkOverlap = 200  // the previous chunk's last sentence is repeated if at most this long
)

// Split cuts text into overlapping chunks on sentence and paragraph
// boundaries. Whitespace is normalised; empty text gives no chunks.
func Split(text string) []string {
	var out []string
	var cur []string // sentences of the chunk being built
	size := 0
	flush := func(keepOverlap bool) {
		if len(cur) == 0 {
			return
		}
		out = append(out, strings.Join(cur, " "))
		last := cur[len(cur)-1]
		cur, size = nil, 0
		if keepOverlap && utf8.RuneCountInString(last) <= ChunkOverlap {
			cur, size = []string{last}, utf8.RuneCountInString(last)
		}
	}
	for _, para := range paragraphs(text) {
		sentences := sentences(para)
		paraSize := 0
		for _, s := range sentences {
			paraSize += utf8.RuneCountInString(s) + 1
		}
		if size > 0 && size+paraSize > ChunkMax {
			flush(false) // the paragraph starts a chunk of its own
		}
		for _, s := range sentences {
			n := utf8.RuneCountInString(s)
			if size > 0 && size+1+n > ChunkMax {
				flush(true)
			}
			cur = append(cur, s)
			size += n + 1
			if size >= ChunkTarget {
				flush(true)
			}
		}
		if size >= ChunkTarget/2 {
			flush(false)
		}
	}
	if len(cur) > 0 && (len(out) == 0 || strings.Join(cur, " ") != lastSentence(out[len(out)-1])) {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// lastSentence is the tail a chunk would carry over as overlap.
func lastSentence(chunk string) string {
	s := sentences(chunk)
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// paragraphs splits on blank lines, normalising whitespace inside each.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// sentences splits a paragraph after ., ! or ? followed by a space and an
// upper-case letter or digit (so "e.g. this" and "3.5" stay whole), and
// cuts sentences longer than ChunkMax at spaces.
func sentences(p string) []string {
	var out []string
	start := 0
	runes := []rune(p)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		j := i + 1
		for j < len(runes) && (runes[j] == '"' || runes[j] == '\'' || runes[j] == ')' || runes[j] == '”') {
			j++
		}
		if j+1 < len(runes) && runes[j] == ' ' && (unicode.IsUpper(runes[j+1]) || unicode.IsDigit(runes[j+1])) {
			out = append(out, cutLong(string(runes[start:j]))...)
			start = j + 1
			i = j
		}
	}
	if start < len(runes) {
		out = append(out, cutLong(string(runes[start:]))...)
	}
	return out
}

// cutLong splits a sentence over ChunkMax runes at spaces.
func cutLong(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var out []string
	for utf8.RuneCountInString(s) > ChunkMax {
		r := []rune(s)
		cut := ChunkMax
		for cut > ChunkMax/2 && r[cut] != ' ' {
			cut--
		}
		if r[cut] != ' ' {
			cut = ChunkMax
		}
		out = append(out, strings.TrimSpace(string(r[:cut])))
		s = strings.TrimSpace(string(r[cut:]))
	}
	return append(out, s)
}
