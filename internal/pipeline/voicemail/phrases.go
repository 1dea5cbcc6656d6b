package voicemail

import (
	"strings"
	"unicode"
)

// DefaultPhrases are the greeting phrases that mark a machine (Config.Phrases
// nil). They are matched on whole words, ignoring case, punctuation and
// apostrophes ("can't" matches "cant" and "can't").
var DefaultPhrases = []string{
	"leave a message", "leave me a message", "leave us a message", "leave your message",
	"leave your name", "record your message", "after the tone", "after the beep",
	"at the tone", "at the beep", "voicemail", "voice mail", "mailbox",
	"not available", "unavailable", "can't take your call", "cannot take your call",
	"can't come to the phone", "you have reached", "you've reached",
}

// normalize lowers text and reduces it to words of letters and digits
// separated by single spaces, with a space at either end so that " word "
// matches whole words only. Apostrophes join ("can't" → "cant").
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text) + 2)
	b.WriteByte(' ')
	space := true
	for _, r := range strings.ToLower(text) {
		switch {
		case r == '\'' || r == '’':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// phraseMatcher finds phrases in text that arrives in pieces; a phrase may
// straddle two pieces.
type phraseMatcher struct {
	phrases []string // normalized, original at the same index
	orig    []string
	tail    string // the last words of the text so far, normalized (" " at first)
}

func newPhraseMatcher(phrases []string) *phraseMatcher {
	m := &phraseMatcher{tail: " "}
	for _, p := range phrases {
		if n := normalize(p); n != " " {
			m.phrases = append(m.phrases, n)
			m.orig = append(m.orig, p)
		}
	}
	return m
}

// tailWords is how many words of earlier text are kept to join the next
// piece: more than any phrase has.
const tailWords = 8

// add takes the next piece of text and returns the first phrase found in
// it (together with the end of the text before it), or "".
func (m *phraseMatcher) add(text string) string {
	s := m.tail + normalize(text)[1:]
	found := ""
	for i, p := range m.phrases {
		if strings.Contains(s, p) {
			found = m.orig[i]
			break
		}
	}
	// Keep the last tailWords words, with their leading space.
	words, cut := 0, 0
	for i := len(s) - 2; i >= 0; i-- {
		if s[i] == ' ' {
			words++
			cut = i
			if words == tailWords {
				break
			}
		}
	}
	m.tail = s[cut:]
	return found
}
