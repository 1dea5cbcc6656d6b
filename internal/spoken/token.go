package spoken

import (
	"strings"
	"unicode"
)

// symbols are tokens spoken as a word when they stand alone ("press # to
// exit", "separated by *"): the names Asterisk's own prompts use for them.
var symbols = map[string]string{
	"#": "pound", "*": "star", "&": "and", "@": "at", "+": "plus", "%": "percent", "$": "dollar", "=": "equals",
}

// Token is one whitespace-separated, lower-cased token as words.
func Token(tok string) []string {
	tok = strings.TrimLeftFunc(tok, func(c rune) bool { return !isWordRune(c) && !strings.ContainsRune("$#*&@+", c) })
	tok = strings.TrimRightFunc(tok, func(c rune) bool { return !isWordRune(c) && !strings.ContainsRune("%#*&+", c) })
	if tok == "" {
		return nil
	}
	if w, ok := symbols[tok]; ok {
		return []string{w}
	}
	if amount, ok := strings.CutPrefix(tok, "$"); ok {
		if w, ok := money(amount); ok {
			return w
		}
	}
	if n, ok := strings.CutSuffix(tok, "%"); ok {
		if w, ok := Number(n); ok {
			return append(w, "percent")
		}
	}
	if w, ok := Clock(tok); ok {
		return w
	}
	if w, ok := Number(tok); ok {
		return w
	}
	var words []string
	for _, piece := range strings.FieldsFunc(tok, func(c rune) bool { return !isWordRune(c) && c != '\'' }) {
		for _, run := range letterDigitRuns(piece) {
			if w, ok := Number(run); ok {
				words = append(words, w...)
			} else if run = strings.Trim(run, "'"); run != "" {
				words = append(words, run)
			}
		}
	}
	return words
}

func isWordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

// letterDigitRuns splits s where digits start or end: "3d" into "3" and
// "d", "h323" into "h" and "323". (A byte before a digit that is part of a
// multi-byte letter is not a digit, so the test on s[i-1] is safe.)
func letterDigitRuns(s string) []string {
	var runs []string
	start := 0
	for i, c := range s {
		if i > start && IsDigit(c) != IsDigit(rune(s[i-1])) {
			runs = append(runs, s[start:i])
			start = i
		}
	}
	return append(runs, s[start:])
}

func IsDigit(c rune) bool { return c >= '0' && c <= '9' }

// money reads "40" as forty dollars, "12.50" as twelve dollars fifty cents.
func money(amount string) ([]string, bool) {
	whole, cents, hasCents := strings.Cut(amount, ".")
	w, ok := Number(whole)
	if !ok {
		return nil, false
	}
	unit := "dollars"
	if whole == "1" {
		unit = "dollar"
	}
	w = append(w, unit)
	if !hasCents {
		return w, true
	}
	c, ok := ParseDigits(cents)
	if !ok || len(cents) != 2 {
		return nil, false
	}
	if c == 0 {
		return w, true
	}
	w = append(w, Cardinal(c)...)
	if c == 1 {
		return append(w, "cent"), true
	}
	return append(w, "cents"), true
}

// Clock reads "9:30" as nine thirty, "9:05" as nine oh five, "9:00" as
// nine.
func Clock(tok string) ([]string, bool) {
	h, m, ok := strings.Cut(tok, ":")
	hh, ok1 := ParseDigits(h)
	mm, ok2 := ParseDigits(m)
	if !ok || !ok1 || !ok2 || len(h) > 2 || len(m) != 2 || hh > 24 || mm > 59 {
		return nil, false
	}
	w := Cardinal(hh)
	switch {
	case mm == 0:
		return w, true
	case mm < 10:
		return append(w, "oh", Ones[mm]), true
	default:
		return append(w, Cardinal(mm)...), true
	}
}
