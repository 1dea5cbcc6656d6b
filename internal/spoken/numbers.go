// Package spoken owns how written tokens are said aloud in American
// English: numbers as words (cardinals, ordinals, digit strings, money,
// clock times) and the symbols read out alone. The recognition
// benchmark's normaliser (bench/wer) and the language-model builder
// (internal/provider/stt/sphinx/lm) both use it, so a model spells
// numbers the way the benchmark scores them.
package spoken

import "strings"

var (
	// Ones are the words for 0 to 19.
	Ones = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
		"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
	tens   = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
	scales = []struct {
		n    uint64
		name string
	}{{1e12, "trillion"}, {1e9, "billion"}, {1e6, "million"}, {1e3, "thousand"}}
)

// Cardinal spells n as it is read aloud, without "and" (American usage):
// 1250 is "one thousand two hundred fifty".
func Cardinal(n uint64) []string {
	if n < 20 {
		return []string{Ones[n]}
	}
	var w []string
	for _, s := range scales {
		if n >= s.n {
			w = append(w, Cardinal(n/s.n)...)
			w = append(w, s.name)
			n %= s.n
			if n == 0 {
				return w
			}
		}
	}
	if n >= 100 {
		w = append(w, Ones[n/100], "hundred")
		n %= 100
		if n == 0 {
			return w
		}
	}
	if n < 20 {
		return append(w, Ones[n])
	}
	w = append(w, tens[n/10])
	if n%10 != 0 {
		w = append(w, Ones[n%10])
	}
	return w
}

// Ordinal turns the last word of a spelled cardinal into its ordinal:
// "twenty one" to "twenty first".
func Ordinal(w []string) []string {
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

// DigitsAloud reads a run of digits one by one ("4242" as "four two four
// two"): how extensions, PINs and phone numbers are spoken.
func DigitsAloud(s string) []string {
	w := make([]string, 0, len(s))
	for _, c := range s {
		w = append(w, Ones[c-'0'])
	}
	return w
}

// ParseDigits reads a run of ASCII digits; ok is false when s is empty,
// holds anything else, or is too long to be a count.
func ParseDigits(s string) (n uint64, ok bool) {
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

// Number spells one token made of digits (and maybe grouping commas, a
// decimal point or an ordinal suffix) the way a speaker says it. ok is
// false when the token is not such a number.
//
//	"7" seven; "1,500" one thousand five hundred; "28.8" twenty eight
//	point eight; "21st" twenty first; "4242" four two four two (four or
//	more digits without commas are read digit by digit, as extensions and
//	PINs are on the phone, and so is a number with a leading zero).
func Number(tok string) ([]string, bool) {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if n, ok := ParseDigits(strings.TrimSuffix(tok, suf)); ok && strings.HasSuffix(tok, suf) {
			return Ordinal(Cardinal(n)), true
		}
	}
	if whole, frac, ok := strings.Cut(tok, "."); ok {
		n, ok1 := Number(whole)
		if !ok1 || !AllDigits(frac) {
			return nil, false
		}
		return append(append(n, "point"), DigitsAloud(frac)...), true
	}
	if strings.Contains(tok, ",") {
		groups := strings.Split(tok, ",")
		for i, g := range groups {
			if _, ok := ParseDigits(g); !ok || (i > 0 && len(g) != 3) || (i == 0 && len(g) > 3) {
				return nil, false
			}
		}
		n, _ := ParseDigits(strings.Join(groups, ""))
		return Cardinal(n), true
	}
	if !AllDigits(tok) {
		return nil, false
	}
	if len(tok) >= 4 || (len(tok) > 1 && tok[0] == '0') {
		return DigitsAloud(tok), true
	}
	n, _ := ParseDigits(tok)
	return Cardinal(n), true
}

// AllDigits reports whether s is a non-empty run of ASCII digits.
func AllDigits(s string) bool {
	for _, c := range s {
		if !IsDigit(c) {
			return false
		}
	}
	return s != ""
}
