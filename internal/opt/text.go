package opt

import (
	"encoding/json"
	"fmt"
	"strings"
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
// (invalid.Text). It reads the raw bytes because encoding/json turns
// invalid UTF-8 and lone surrogates into U+FFFD without a word.
func checkText(data []byte, l *invalid.List) {
	s := textScanner{data: data, l: l}
	s.value("")
}

type textScanner struct {
	data []byte
	pos  int
	l    *invalid.List
}

func (s *textScanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value reads the value at pos, whose path is path. The document is valid
// JSON (json.Valid), so the scanner need not check its syntax.
func (s *textScanner) value(path string) {
	s.skipSpace()
	switch s.data[s.pos] {
	case '{':
		s.pos++
		s.skipSpace()
		if s.data[s.pos] == '}' {
			s.pos++
			return
		}
		for {
			s.skipSpace()
			key, problem := s.str()
			name := invalid.Join(path, key)
			if problem != "" {
				s.l.Add(name, "%s", invalid.KeyProblem(problem))
			}
			s.skipSpace()
			s.pos++ // ':'
			s.value(name)
			s.skipSpace()
			c := s.data[s.pos]
			s.pos++
			if c == '}' {
				return
			}
		}
	case '[':
		s.pos++
		s.skipSpace()
		if s.data[s.pos] == ']' {
			s.pos++
			return
		}
		for i := 0; ; i++ {
			s.value(invalid.Index(path, i))
			s.skipSpace()
			c := s.data[s.pos]
			s.pos++
			if c == ']' {
				return
			}
		}
	case '"':
		if _, problem := s.str(); problem != "" {
			s.l.Add(nameOr(path), "%s", problem)
		}
	default: // number, true, false, null
		for s.pos < len(s.data) && !strings.ContainsRune(",]} \t\n\r", rune(s.data[s.pos])) {
			s.pos++
		}
	}
}

// str reads the string at pos: its text, with what is refused written out
// as sent (\u0000, \ud800, \xff) so a bad key can be named, and the first
// problem found ("" if none).
func (s *textScanner) str() (text, problem string) {
	s.pos++ // opening quote
	start := s.pos
	for c := s.data[s.pos]; c != '"' && c != '\\' && c < utf8.RuneSelf; c = s.data[s.pos] {
		s.pos++
	}
	if s.data[s.pos] == '"' { // plain ASCII: nothing to decode or refuse
		s.pos++
		return string(s.data[start : s.pos-1]), ""
	}
	var b strings.Builder
	b.Write(s.data[start:s.pos])
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
			return b.String(), problem
		case c == '\\':
			s.escape(&b, note)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size == 1 {
				note(invalid.TextUTF8)
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.Write(s.data[s.pos : s.pos+size])
			}
			s.pos += size
		}
	}
}

// escape reads the escape sequence at pos into b.
func (s *textScanner) escape(b *strings.Builder, note func(string)) {
	if c := s.data[s.pos+1]; c != 'u' {
		b.WriteByte(unescape(c))
		s.pos += 2
		return
	}
	r := s.hex4(s.pos + 2)
	s.pos += 6
	switch {
	case r == 0:
		note(invalid.TextNUL)
		b.WriteString(`\u0000`)
	case r >= 0xD800 && r < 0xDC00 && s.pos+6 <= len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u':
		lo := s.hex4(s.pos + 2)
		if lo < 0xDC00 || lo >= 0xE000 {
			note(invalid.TextSurrogate)
			fmt.Fprintf(b, `\u%04x`, r) // the next escape is read on its own
			return
		}
		b.WriteRune((r-0xD800)<<10 + (lo - 0xDC00) + 0x10000)
		s.pos += 6
	case r >= 0xD800 && r < 0xE000:
		note(invalid.TextSurrogate)
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteRune(r)
	}
}

// hex4 is the value of the four hex digits at i.
func (s *textScanner) hex4(i int) rune {
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
