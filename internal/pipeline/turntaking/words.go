package turntaking

import (
	"strings"
	"unicode"
)

// Words are text's words, lower-case, without punctuation: letters and
// digits, with apostrophes kept inside a word ("that's") and hyphens
// splitting it ("uh-huh" is "uh", "huh", as recognizers also write it).
func Words(text string) []string {
	return strings.FieldsFunc(normalize(text), func(r rune) bool { return r == ' ' })
}

// normalize lower-cases text and turns everything that is not part of a
// word into a space.
func normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	rs := []rune(text)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '\'' || r == '’') && i > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i-1]) && unicode.IsLetter(rs[i+1]):
			b.WriteByte('\'')
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// RealWords counts the words of text that are neither backchannels (the
// listener's "uh-huh", "yeah", "okay", "I see", which say "go on") nor
// fillers ("um"): the words that can make caller speech an interruption.
func RealWords(text string) int {
	words := Words(text)
	n := 0
	for i := 0; i < len(words); {
		if k := matchPhrase(words[i:], backchannelPhrases); k > 0 {
			i += k
			continue
		}
		if !backchannels[words[i]] && !fillers[words[i]] {
			n++
		}
		i++
	}
	return n
}

// matchPhrase is the length of the phrase of phrases that words start
// with (0: none).
func matchPhrase(words []string, phrases [][]string) int {
	for _, p := range phrases {
		if len(words) >= len(p) && equal(words[:len(p)], p) {
			return len(p)
		}
	}
	return 0
}

// isOneOf reports whether words are exactly one of phrases.
func isOneOf(words []string, phrases [][]string) bool {
	for _, p := range phrases {
		if equal(words, p) {
			return true
		}
	}
	return false
}

// endsWith reports whether words end with one of phrases.
func endsWith(words []string, phrases [][]string) bool {
	for _, p := range phrases {
		if len(words) >= len(p) && equal(words[len(words)-len(p):], p) {
			return true
		}
	}
	return false
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func phraseList(phrases ...string) [][]string {
	out := make([][]string, len(phrases))
	for i, p := range phrases {
		out[i] = Words(p)
	}
	return out
}

// The word lists. They are English: the rules of another language fall
// back to the in-between silence and to counting every word.
var (
	// fillers hold the speaker's turn while they think.
	fillers = set("um", "umm", "uh", "uhm", "er", "erm", "ah", "eh", "em", "hmm", "hm", "mm")
	// fillerPhrases end an utterance that is not over.
	fillerPhrases = phraseList("you know", "i mean", "kind of", "sort of", "like")

	// backchannels are the listener's "go on".
	backchannels = set("uhhuh", "mhm", "mmhm", "mmhmm", "mhmm", "huh", "yeah", "yea", "yes", "yep", "yup",
		"ok", "okay", "alright", "right", "sure", "cool", "great", "nice", "good", "fine", "exactly",
		"oh", "aha", "wow", "true", "indeed", "perfect", "totally", "gotcha")
	backchannelPhrases = phraseList("uh huh", "mm hm", "mm hmm", "m hm", "all right", "i see", "got it", "sounds good")

	// continuations need another word after them: a sentence does not end
	// on them (without punctuation saying it does).
	continuations = set(
		// conjunctions
		"and", "but", "or", "nor", "so", "because", "cause", "since", "if", "unless", "although",
		"while", "whereas", "whether", "than", "plus",
		// prepositions
		"to", "of", "in", "on", "at", "for", "from", "with", "without", "about", "into", "onto", "by",
		"as", "between", "through", "after", "before", "until", "till", "around", "per", "via", "against",
		"during", "within", "toward", "towards", "upon", "like",
		// articles, determiners, possessives
		"a", "an", "the", "my", "your", "our", "their", "its", "his", "these", "those", "every", "each",
		"another", "some", "any", "very", "just",
		// auxiliaries and copulas, contracted subjects
		"is", "are", "was", "were", "am", "be", "been", "being", "will", "would", "can", "could", "should",
		"shall", "may", "might", "must", "do", "does", "did", "have", "has", "had",
		"i'm", "it's", "that's", "there's", "what's", "i'd", "i'll", "we're", "you're", "they're", "i've",
		"we'll", "we've", "he's", "she's",
		// subject pronouns
		"i", "we", "they", "he", "she",
	)

	// continuationPhrases need a clause after them. "though" alone is
	// not one: said last it is the adverb ("that's a bit late though"),
	// a closer.
	continuationPhrases = phraseList("even though", "as though")

	// endings are last words that would read as unfinished but end a
	// sentence here: a verb's particle ("can I come by", "I'll stop
	// by") and "bye" as recognizers write it ("okay by", "good by").
	endings = phraseList("come by", "coming by", "came by", "stop by", "stopping by", "drop by",
		"dropping by", "swing by", "pass by", "stand by", "get by", "good by", "bye by", "okay by",
		"ok by", "alright by", "all right by", "thanks by", "thank you by")

	// replies are whole utterances that are complete as they are.
	replies = phraseList("yes", "no", "yeah", "yep", "nope", "okay", "ok", "sure", "right", "correct",
		"exactly", "thanks", "thank you", "thank you very much", "no thanks", "no thank you", "goodbye",
		"bye", "bye bye", "hello", "hi", "that's all", "that's it", "that's right", "that's correct",
		"of course", "not really", "i don't know", "perfect", "great", "sounds good", "that works",
		"absolutely", "definitely", "alright", "all right", "yes please", "no problem", "not yet")

	// closers end sentences: "... for me", "... please", "... today".
	closers = set("please", "thanks", "though", "today", "tonight", "tomorrow", "yesterday", "now", "yet", "too",
		"again", "later", "soon", "anymore", "here", "there", "me", "it", "them", "us", "him",
		"everything", "anything", "something", "nothing", "morning", "afternoon", "evening", "week",
		"weekend", "month", "year", "o'clock")
	closerPhrases = phraseList("thank you")

	// questionStarts begin questions.
	questionStarts = set("what", "when", "where", "who", "whom", "whose", "why", "how", "which", "can", "could",
		"would", "will", "do", "does", "did", "is", "are", "was", "were", "should", "may", "have", "has")
)
