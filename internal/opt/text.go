package opt

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/parley-voice/parley/internal/invalid"
)

// CheckText is nil when data, valid JSON, holds only text every store can
// keep, else an *invalid.Error naming each string or key that does not
// (see checkText). For JSON that Parley receives other than as a request
// body: a webhook's answer, whose sender cannot be answered 400.
func CheckText(data []byte) error {
	if !json.Valid(data) {
		return nil // not JSON: the caller's decoding says so
	}
	var l invalid.List
	checkText(data, &l)
	return l.Err()
}

// checkText names every string of a valid JSON document, object keys
// included, that holds a NUL, invalid UTF-8 or a lone surrogate
// (invalid.Text). It reads the raw bytes (scan) because encoding/json turns
// invalid UTF-8 and lone surrogates into U+FFFD without a word.
func checkText(data []byte, l *invalid.List) {
	var dups invalid.List
	scan(data, l, &dups)
}

// str reads the string at pos and reports the first problem of its text
// ("" if none). A string sent plain (ASCII, no escape) is returned as a
// slice of the document; any other is decoded onto dst, what is refused
// written out as sent (\u0000, \ud800, \xff) so a bad key can be named,
// and returned as the grown dst, decoded true.
func (s *scanner) str(dst []byte) (text []byte, decoded bool, problem string) {
	s.pos++ // opening quote
	start := s.pos
	for c := s.data[s.pos]; c != '"' && c != '\\' && c < utf8.RuneSelf; c = s.data[s.pos] {
		s.pos++
	}
	if s.data[s.pos] == '"' { // plain ASCII: nothing to decode or refuse
		s.pos++
		return s.data[start : s.pos-1], false, ""
	}
	dst = append(dst, s.data[start:s.pos]...)
	note := func(p string) {
		if problem == "" {
			problem = p
		}
	}
	for {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return dst, true, problem
		case c == '\\':
			var p string
			dst, p = s.escape(dst)
			note(p)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				note(invalid.TextUTF8)
				dst = fmt.Appendf(dst, `\x%02x`, c)
			} else {
				dst = append(dst, s.data[s.pos:s.pos+size]...)
			}
			s.pos += size
		}
	}
}

// escape reads the escape sequence at pos onto dst, and what it refuses.
func (s *scanner) escape(dst []byte) ([]byte, string) {
	if c := s.data[s.pos+1]; c != 'u' {
		s.pos += 2
		return append(dst, unescape(c)), ""
	}
	r := s.hex4(s.pos + 2)
	s.pos += 6
	switch {
	case r == 0:
		return append(dst, `\u0000`...), invalid.TextNUL
	case r >= 0xD800 && r < 0xDC00 && s.pos+6 <= len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u':
		lo := s.hex4(s.pos + 2)
		if lo < 0xDC00 || lo >= 0xE000 {
			return fmt.Appendf(dst, `\u%04x`, r), invalid.TextSurrogate // the next escape is read on its own
		}
		s.pos += 6
		return utf8.AppendRune(dst, (r-0xD800)<<10+(lo-0xDC00)+0x10000), ""
	case r >= 0xD800 && r < 0xE000:
		return fmt.Appendf(dst, `\u%04x`, r), invalid.TextSurrogate
	}
	return utf8.AppendRune(dst, r), ""
}

// hex4 is the value of the four hex digits at i.
func (s *scanner) hex4(i int) rune {
	var r rune
	for _, c := range s.data[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default: // 'A' to 'F': the JSON is valid
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// unescape is the character of the one-letter escape \c.
func unescape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // " \ /
}
