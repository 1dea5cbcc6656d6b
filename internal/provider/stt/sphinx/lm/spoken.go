package lm

import (
	"strings"
	"unicode"
)

// The token rules below are bench/wer's (bench/wer/normalise.go), copied
// because internal/ does not import bench/. Change both together.

// symbols are tokens spoken as a word when they stand alone.
var symbols = map[string]string{
	"#": "pound", "*": "star", "&": "and", "@": "at", "+": "plus", "%": "percent", "$": "dollar", "=": "equals",
}

// spoken is one whitespace-separated, lower-cased token as words.
func spoken(tok string) []string {
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
		if w, ok := number(n); ok {
			return append(w, "percent")
		}
	}
	if w, ok := clock(tok); ok {
		return w
	}
	if w, ok := number(tok); ok {
		return w
	}
	var words []string
	for _, piece := range strings.FieldsFunc(tok, func(c rune) bool { return !isWordRune(c) && c != '\'' }) {
		for _, run := range letterDigitRuns(piece) {
			if w, ok := number(run); ok {
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
// "d", "h323" into "h" and "323".
func letterDigitRuns(s string) []string {
	var runs []string
	start := 0
	for i, c := range s {
		if i > start && isDigit(c) != isDigit(rune(s[i-1])) {
			runs = append(runs, s[start:i])
			start = i
		}
	}
	return append(runs, s[start:])
}

func isDigit(c rune) bool { return c >= '0' && c <= '9' }

// money reads "40" as forty dollars, "12.50" as twelve dollars fifty cents.
func money(amount string) ([]string, bool) {
	whole, cents, hasCents := strings.Cut(amount, ".")
	w, ok := number(whole)
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
	c, ok := parseDigits(cents)
	if !ok || len(cents) != 2 {
		return nil, false
	}
	if c == 0 {
		return w, true
	}
	w = append(w, cardinal(c)...)
	if c == 1 {
		return append(w, "cent"), true
	}
	return append(w, "cents"), true
}

// clock reads "9:30" as nine thirty, "9:05" as nine oh five, "9:00" as
// nine.
func clock(tok string) ([]string, bool) {
	h, m, ok := strings.Cut(tok, ":")
	hh, ok1 := parseDigits(h)
	mm, ok2 := parseDigits(m)
	if !ok || !ok1 || !ok2 || len(h) > 2 || len(m) != 2 || hh > 24 || mm > 59 {
		return nil, false
	}
	w := cardinal(hh)
	switch {
	case mm == 0:
		return w, true
	case mm < 10:
		return append(w, "oh", ones[mm]), true
	default:
		return append(w, cardinal(mm)...), true
	}
}
