package turntaking

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Ending is what the words recognised so far say about the caller's turn.
type Ending int

const (
	// Undecided: the words do not tell (nothing recognised yet included).
	Undecided Ending = iota
	// Complete: a finished sentence, question or reply.
	Complete
	// Unfinished: the words stop where a sentence cannot end.
	Unfinished
)

func (e Ending) String() string {
	switch e {
	case Complete:
		return "complete"
	case Unfinished:
		return "unfinished"
	}
	return "undecided"
}

// minQuestionWords is how long a question must be to count as complete
// without punctuation: "when do you open" is, "can you" is not.
const minQuestionWords = 4

// Judge tells whether text, the caller's words so far, ends their turn
// (the rules are in the package documentation).
func Judge(text string) Ending {
	t := strings.TrimSpace(text)
	if t == "" {
		return Undecided
	}
	switch last, _ := utf8.DecodeLastRuneInString(t); {
	case last == '.' && strings.HasSuffix(t, "..."), last == '…':
		return Unfinished // trailing off
	case last == '.' || last == '?' || last == '!':
		return Complete
	case last == ',' || last == ';' || last == ':' || unicode.Is(unicode.Pd, last):
		return Unfinished
	}
	words := Words(t)
	if len(words) == 0 {
		return Undecided
	}
	last := words[len(words)-1]
	switch {
	case endsWith(words, endings):
		return Complete
	case fillers[last] || endsWith(words, fillerPhrases) || continuations[last] || endsWith(words, continuationPhrases):
		return Unfinished
	case isOneOf(words, replies):
		return Complete
	case len(words) >= 2 && (closers[last] || endsWith(words, closerPhrases)):
		return Complete
	case len(words) >= minQuestionWords && questionStarts[words[0]] && last != "you":
		return Complete
	}
	return Undecided
}

// Silence is how long the caller must be silent for their turn to end,
// given the words recognised so far: MinSilence after a complete
// sentence, MaxSilence after an unfinished one, a quarter of the way
// between otherwise.
func (s Settings) Silence(words string) time.Duration {
	switch Judge(words) {
	case Complete:
		return s.MinSilence
	case Unfinished:
		return s.MaxSilence
	}
	return s.MinSilence + (s.MaxSilence-s.MinSilence)/4
}
