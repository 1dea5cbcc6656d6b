package wer

import (
	"strings"

	"github.com/parley-voice/parley/internal/spoken"
)

// Normalise turns a reference transcript or a recognizer's text into the
// words sclite compares, so that only what was heard differs: notes of
// non-speech in brackets, parentheses or angle brackets ("[ascending
// tones]", "(simple tone sound plays)", "<beep>") are dropped; letters are
// lower-cased; numbers become words (see [spoken.Number]; also "$40" forty
// dollars, "20%" twenty percent, "9:30" nine thirty); a lone "#", "*" or
// "&" becomes pound, star, and; every other character but letters, digits
// and apostrophes inside a word separates words ("call-forward" is two
// words, "a.m." is "a m", "don't" stays one). The result is words
// separated by single spaces, "" when nothing is spoken.
func Normalise(text string) string {
	text = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`).Replace(dropNotes(text))
	var words []string
	for _, f := range strings.Fields(strings.ToLower(text)) {
		words = append(words, spoken.Token(f)...)
	}
	return strings.Join(words, " ")
}

// dropNotes removes spans in [], () and <> (not nested; one left open
// runs to the end of the text).
func dropNotes(s string) string {
	closing := map[rune]rune{'[': ']', '(': ')', '<': '>'}
	var b strings.Builder
	var want rune // the closer of the open note, 0 outside one
	for _, c := range s {
		switch {
		case want != 0:
			if c == want {
				want = 0
				b.WriteByte(' ')
			}
		case closing[c] != 0:
			want = closing[c]
			b.WriteByte(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
