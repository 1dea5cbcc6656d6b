package knowledge

import (
	"strings"
	"unicode"
)

// terms are the content words of text: lower-cased, stop words dropped,
// crudely stemmed (plural and -ing/-ed endings), each once. Scores are
// computed from them the same way on every store.
func terms(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stopWords[w] || len(w) < 2 {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "es") && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again all am an and any are as at be because been before being
		below between both but by can could did do does doing down during each few for from further had has have having he her
		here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
		our ours out over own same she should so some such than that the their theirs them then there these they this those
		through to too under until up very was we were what when where which while who whom why will with would you your
		yours hi hello please tell know want like get got need much many also us let ok okay`) {
		m[w] = true
	}
	return m
}()
