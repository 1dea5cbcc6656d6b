package invalid

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// What is wrong with text that Parley refuses to store. PostgreSQL cannot
// hold a NUL or invalid UTF-8 in text (SQLite can), and replacing either
// silently would store something the caller did not send; so every store
// refuses both, through the API, before anything is written.
const (
	TextNUL       = "must not contain a NUL character (U+0000)"
	TextUTF8      = "must be valid UTF-8"
	TextSurrogate = "must not contain a lone UTF-16 surrogate (\\uD800 to \\uDFFF)"
)

// Text is what makes s unfit to store as text (TextNUL or TextUTF8), or ""
// when nothing does. Overlong encodings and encoded surrogates are invalid
// UTF-8.
func Text(s string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return TextUTF8
		case r == 0:
			return TextNUL
		}
		i += size
	}
	return ""
}

// Storable is s with what Text refuses (a NUL, invalid UTF-8) replaced by
// U+FFFD: for text Parley stores that nobody can be asked to fix, such as
// what a model or a recogniser wrote, a carrier's error, or a SIP caller's
// From user. The API refuses such text instead; here refusing would lose
// the write (PostgreSQL cannot hold it) and leave a call or a message
// unfinished.
func Storable(s string) string {
	if Text(s) == "" {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// Visible is s with what Text refuses written out (\u0000, \xff), so a
// bad object key or parameter name can be named in an answer.
func Visible(s string) string {
	if Text(s) == "" {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == 0:
			b.WriteString(`\u0000`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// KeyProblem is how a problem of Text reads for an object key or a
// parameter name rather than a value.
func KeyProblem(problem string) string { return "key " + problem }

// Values adds every form or query value (and name) that Text refuses to l,
// by name, and returns the names (as given) whose text is bad.
func Values(v map[string][]string, l *List) (bad []string) {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if p := Text(k); p != "" {
			l.Add(Visible(k), "%s", KeyProblem(p))
			bad = append(bad, k)
			continue
		}
		for _, s := range v[k] {
			if p := Text(s); p != "" {
				l.Add(k, "%s", p)
				bad = append(bad, k)
				break
			}
		}
	}
	return bad
}
