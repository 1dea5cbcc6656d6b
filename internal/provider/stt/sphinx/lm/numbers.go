package lm

// The number wording is bench/wer's (bench/wer/numbers.go), copied because
// internal/ does not import bench/: a language model that spells numbers the
// way the benchmark scores them. Change both together.

import "strings"

var (
	ones = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens   = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	scales = []struct {
		n    uint64
		name string
	}{{1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}, {1e3, "thousand"}}
)

// cardinal spells n as it is read aloud, without "and" (American usage):
// 1250 is "one thousand two hundred fifty".
func cardinal(n uint64) []string {
	if n < 20 {
		return []string{ones[n]}
	}
	var w []string
	for _, s := range scales {
		if n >= s.n {
			w = append(w, cardinal(n/s.n)...)
			w = append(w, s.name)
			n %= s.n
			if n == 0 {
				return w
			}
		}
	}
	if n >= 100 {
		w = append(w, ones[n/100], "hundred")
		n %= 100
		if n == 0 {
			return w
		}
	}
	if n < 20 {
		return append(w, ones[n])
	}
	w = append(w, tens[n/10])
	if n%10 != 0 {
		w = append(w, ones[n%10])
	}
	return w
}

// ordinalOf turns the last word of a spelled cardinal into its ordinal:
// "twenty one" to "twenty first".
func ordinalOf(w []string) []string {
	last := w[len(w)-1]
	irregular := map[string]string{"one": "first", "two": "second", "three": "third", "five": "fifth",
		"eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
	switch o, ok := irregular[last]; {
	case ok:
		last = o
	case strings.HasSuffix(last, "y"):
		last = strings.TrimSuffix(last, "y") + "ieth"
	default:
		last += "th"
	}
	out := append([]string(nil), w[:len(w)-1]...)
	return append(out, last)
}

// digitsAloud reads a run of digits one by one ("4242" as "four two four
// two"): how extensions, PINs and phone numbers are spoken.
func digitsAloud(s string) []string {
	w := make([]string, 0, len(s))
	for _, c := range s {
		w = append(w, ones[c-'0'])
	}
	return w
}

// parseDigits reads a run of ASCII digits; ok is false when s is empty,
// holds anything else, or is too long to be a count.
func parseDigits(s string) (n uint64, ok bool) {
	if s == "" || len(s) > 15 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// number spells one token made of digits (and maybe grouping commas, a
// decimal point or an ordinal suffix) the way a speaker says it. ok is
// false when the token is not such a number.
//
//	"7" seven; "1,500" one thousand five hundred; "28.8" twenty eight
//	point eight; "21st" twenty first; "4242" four two four two (four or
//	more digits without commas are read digit by digit, as extensions and
//	PINs are on the phone, and so is a number with a leading zero).
func number(tok string) ([]string, bool) {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if n, ok := parseDigits(strings.TrimSuffix(tok, suf)); ok && strings.HasSuffix(tok, suf) {
			return ordinalOf(cardinal(n)), true
		}
	}
	if whole, frac, ok := strings.Cut(tok, "."); ok {
		n, ok1 := number(whole)
		if !ok1 || !allDigits(frac) {
			return nil, false
		}
		return append(append(n, "point"), digitsAloud(frac)...), true
	}
	if strings.Contains(tok, ",") {
		groups := strings.Split(tok, ",")
		for i, g := range groups {
			if _, ok := parseDigits(g); !ok || (i > 0 && len(g) != 3) || (i == 0 && len(g) > 3) {
				return nil, false
			}
		}
		n, _ := parseDigits(strings.Join(groups, ""))
		return cardinal(n), true
	}
	if !allDigits(tok) {
		return nil, false
	}
	if len(tok) >= 4 || (len(tok) > 1 && tok[0] == '0') {
		return digitsAloud(tok), true
	}
	n, _ := parseDigits(tok)
	return cardinal(n), true
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return s != ""
}
