package lm

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/parley-voice/parley/internal/spoken"
)

// Sentences splits text into the sentences a caller could say, each as
// its words, the way they are spoken: lower case; a sentence ends at ".",
// "?", "!", ";", ":" before a space, at a line break, a bullet or a
// parenthesis; markup ({{variables}}, HTML tags, Markdown emphasis and
// links' targets) is dropped; a URL or bare domain is said as its host
// ("acme dental dot com"), an e-mail address as "name at host dot com";
// numbers become words ([spoken]). Only letters and apostrophes inside a
// word are left, so every word is something a dictionary can hold.
func Sentences(text string) [][]string {
	text = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`, "\r\n", "\n", "\r", "\n", "•", "\n", "·", "\n").Replace(text)
	text = markup.ReplaceAllString(text, " ")
	text = mdLink.ReplaceAllString(text, "$1")
	var out [][]string
	for _, line := range strings.Split(text, "\n") {
		line = bullet.ReplaceAllString(line, "")
		out = append(out, lineSentences(line)...)
	}
	return out
}

var (
	// markup is what is never said: {{variables}} and {% tags %}, HTML tags.
	markup = regexp.MustCompile(`\{\{.*?\}\}|\{%.*?%\}|<[a-zA-Z/!][^<>]*>`)
	// mdLink is a Markdown link: its text is said, its target is not.
	mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)\s]*\)`)
	// bullet is a list item's or heading's mark at the start of a line.
	bullet = regexp.MustCompile(`^\s*(?:[-*+>#]+|\d{1,2}[.)]|[a-zA-Z][)])\s+`)
)

// lineSentences splits one line into sentences of spoken words.
func lineSentences(line string) [][]string {
	var out [][]string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	toks := strings.Fields(line)
	prev := "" // the previous token, lower-cased, without punctuation
	for i, tok := range toks {
		if phoneGroup.MatchString(tok) {
			cur = append(cur, spoken.DigitsAloud(strings.Trim(tok, "()"))...)
			prev = tok
			continue
		}
		if strings.IndexAny(tok, "([") == 0 {
			flush()
		}
		core := strings.TrimLeft(tok, `"'([*_~`+"`")
		core, end := cutEnd(core, next(toks, i))
		lower := strings.ToLower(core)
		cur = append(cur, wordsOf(lower, prev, prevOf(toks, i))...)
		prev = strings.Trim(lower, ".,")
		if end {
			flush()
		}
	}
	flush()
	return out
}

// phoneGroup is an area code in parentheses: "(555)".
var phoneGroup = regexp.MustCompile(`^\(\d{3}\)$`)

func next(toks []string, i int) string {
	if i+1 < len(toks) {
		return toks[i+1]
	}
	return ""
}

// prevOf is the token before the previous one, lower-cased and trimmed: a
// year follows a month two tokens back ("March 3, 1985").
func prevOf(toks []string, i int) string {
	if i < 2 {
		return ""
	}
	return strings.Trim(strings.ToLower(toks[i-2]), ".,;:")
}

// cutEnd strips trailing punctuation from a token and reports whether it
// ends a sentence. A "." ends one unless it closes an abbreviation that is
// followed by more of the sentence ("Dr. Patel", "8 a.m. to 6 p.m.").
func cutEnd(tok, next string) (string, bool) {
	trimmed := strings.TrimRightFunc(tok, func(c rune) bool {
		return strings.ContainsRune(`.,?!;:)]"'*_~`+"`", c)
	})
	tail := tok[len(trimmed):]
	end := strings.ContainsAny(tail, "?!;:)]")
	if strings.Contains(tail, ".") && !end {
		word := strings.ToLower(trimmed)
		_, isTitle := titles[word]
		nextLower := next != "" && !unicode.IsUpper([]rune(next)[0])
		switch {
		case isTitle:
		case (abbreviated(word) || strings.Contains(word, ".")) && (next == "" || nextLower):
			// "a.m." or "etc." inside the sentence: the dot is the abbreviation's
		default:
			end = true
		}
	}
	return trimmed, end
}

// titles are abbreviations that always go on to a name.
var titles = map[string]string{"dr": "doctor", "mr": "mister", "mrs": "missus", "ms": "miz", "prof": "professor"}

// abbreviations are said as their full words.
var abbreviations = map[string][]string{
	"st": {"street"}, "ave": {"avenue"}, "rd": {"road"}, "blvd": {"boulevard"}, "apt": {"apartment"},
	"etc": {"et", "cetera"}, "e.g": {"for", "example"}, "i.e": {"that", "is"}, "vs": {"versus"},
	"approx": {"approximately"}, "appt": {"appointment"}, "min": {"minutes"}, "mins": {"minutes"},
	"hr": {"hour"}, "hrs": {"hours"}, "mon": {"monday"}, "tue": {"tuesday"}, "tues": {"tuesday"},
	"wed": {"wednesday"}, "thu": {"thursday"}, "thurs": {"thursday"}, "fri": {"friday"},
	"sat": {"saturday"}, "sun": {"sunday"}, "jan": {"january"}, "feb": {"february"},
	"aug": {"august"}, "sept": {"september"}, "oct": {"october"}, "nov": {"november"}, "dec": {"december"},
}

func abbreviated(word string) bool {
	_, ok := abbreviations[word]
	return ok
}

// wordsOf is one token's spoken words. prev and prev2 are the tokens
// before it (lower-cased): a number after a month is a day ("March 3"
// third) and one after a month or a cue like "in" or "since" may be a year.
func wordsOf(tok, prev, prev2 string) []string {
	if tok == "" {
		return nil
	}
	if w, ok := titles[tok]; ok {
		return []string{w}
	}
	if w, ok := abbreviations[tok]; ok {
		return w
	}
	if w, ok := address(tok); ok {
		return w
	}
	if n, ok := spoken.ParseDigits(tok); ok {
		if _, month := months[prev]; month && n >= 1 && n <= 31 {
			return spoken.Ordinal(spoken.Cardinal(n))
		}
		if _, cue := yearCues[prev]; (cue || isMonth(prev2)) && len(tok) == 4 {
			if w, ok := year(n); ok {
				return w
			}
		}
	}
	if w, ok := timeOfDay(tok); ok {
		return w
	}
	if w, ok := digitGroups(tok); ok {
		return w
	}
	var words []string
	// "x-rays", "and/or", "24/7": parts are said one after the other
	for _, part := range strings.FieldsFunc(tok, func(c rune) bool { return c == '-' || c == '/' || c == '–' || c == '—' }) {
		words = append(words, spoken.Token(part)...)
	}
	return words
}

var months = map[string]struct{}{
	"january": {}, "february": {}, "march": {}, "april": {}, "may": {}, "june": {}, "july": {},
	"august": {}, "september": {}, "october": {}, "november": {}, "december": {},
	"jan": {}, "feb": {}, "aug": {}, "sept": {}, "oct": {}, "nov": {}, "dec": {},
}

func isMonth(w string) bool { _, ok := months[w]; return ok }

// yearCues are words a year follows.
var yearCues = map[string]struct{}{
	"in": {}, "since": {}, "year": {}, "from": {}, "until": {}, "till": {}, "by": {}, "of": {},
	"before": {}, "after": {}, "spring": {}, "summer": {}, "fall": {}, "autumn": {}, "winter": {},
	"born": {}, "founded": {}, "established": {}, "opened": {}, "circa": {}, "january": {}, "february": {},
	"march": {}, "april": {}, "may": {}, "june": {}, "july": {}, "august": {}, "september": {},
	"october": {}, "november": {}, "december": {},
}

// year says a year the American way: 1985 nineteen eighty five, 1905
// nineteen oh five, 1900 nineteen hundred, 2000 two thousand, 2007 two
// thousand seven, 2019 twenty nineteen.
func year(n uint64) ([]string, bool) {
	if n < 1100 || n > 2099 {
		return nil, false
	}
	hi, lo := n/100, n%100
	switch {
	case n >= 2000 && n < 2010:
		return spoken.Cardinal(n), true
	case lo == 0:
		return append(spoken.Cardinal(hi), "hundred"), true
	case lo < 10:
		return append(spoken.Cardinal(hi), "oh", spoken.Ones[lo]), true
	default:
		return append(spoken.Cardinal(hi), spoken.Cardinal(lo)...), true
	}
}

// timeOfDay reads "9am", "9:30pm", "9:30" as nine a m, nine thirty p m,
// nine thirty.
func timeOfDay(tok string) ([]string, bool) {
	t, half := tok, ""
	for _, suf := range []string{"am", "pm", "a.m", "p.m", "a.m.", "p.m."} {
		if s, ok := strings.CutSuffix(tok, suf); ok && s != "" && spoken.IsDigit(rune(s[len(s)-1])) {
			t, half = s, suf[:1]
			break
		}
	}
	w, ok := spoken.Clock(t)
	if !ok && half != "" {
		if n, ok2 := spoken.ParseDigits(t); ok2 && n >= 1 && n <= 12 {
			w, ok = spoken.Cardinal(n), true
		}
	}
	if !ok {
		return nil, false
	}
	if half != "" {
		w = append(w, half, "m")
	}
	return w, true
}

// digitGroups reads phone numbers ("555-123-4567", "555.123.4567",
// "123-4567") digit by digit, and a range of small numbers ("10-15") as
// "ten to fifteen".
func digitGroups(tok string) ([]string, bool) {
	tok = strings.TrimPrefix(tok, "+")
	sep := "-"
	if !strings.Contains(tok, "-") {
		sep = "."
		if strings.Count(tok, ".") < 2 {
			return nil, false
		}
	}
	groups := strings.Split(tok, sep)
	if len(groups) < 2 {
		return nil, false
	}
	for _, g := range groups {
		if !spoken.AllDigits(g) {
			return nil, false
		}
	}
	if sep == "-" && len(groups) == 2 && len(groups[0]) <= 2 && len(groups[1]) <= 2 {
		a, _ := spoken.ParseDigits(groups[0])
		b, _ := spoken.ParseDigits(groups[1])
		return append(append(spoken.Cardinal(a), "to"), spoken.Cardinal(b)...), true
	}
	var w []string
	for _, g := range groups {
		w = append(w, spoken.DigitsAloud(g)...)
	}
	return w, true
}

// tlds are the domain endings a bare domain ("acmedental.com") is known by.
var tlds = map[string]struct{}{
	"com": {}, "org": {}, "net": {}, "io": {}, "co": {}, "us": {}, "uk": {}, "ca": {}, "edu": {},
	"gov": {}, "info": {}, "biz": {}, "health": {}, "dental": {}, "app": {}, "ai": {}, "dev": {},
}

// address says a URL, bare domain or e-mail address: "https://www.acme.com/book"
// as "acme dot com", "info@acme.com" as "info at acme dot com".
func address(tok string) ([]string, bool) {
	s := tok
	url := false
	for _, p := range []string{"https://", "http://", "www."} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			s, url = rest, true
		}
	}
	s = strings.TrimPrefix(s, "www.")
	user, host, email := strings.Cut(s, "@")
	if !email {
		host, user = s, ""
	}
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, "?")
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return nil, false
	}
	if _, ok := tlds[labels[len(labels)-1]]; !ok && !url && !email {
		return nil, false
	}
	var w []string
	if email {
		w = append(spokenParts(user), "at")
	}
	for i, l := range labels {
		if l == "" {
			return nil, false
		}
		if i > 0 {
			w = append(w, "dot")
		}
		w = append(w, spokenParts(l)...)
	}
	return w, true
}

func spokenParts(s string) []string {
	var w []string
	for _, p := range strings.FieldsFunc(s, func(c rune) bool { return c == '.' || c == '-' || c == '_' || c == '+' }) {
		w = append(w, spoken.Token(p)...)
	}
	return w
}
