package opt

import (
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
)

// scan reads a valid JSON document (json.Valid) once, in its raw bytes, and
// adds to text every string or key holding text no store can keep
// (text.go) and to dups every key repeated within its object (keys.go).
// The path of what it reads is kept as a stack and written out only to
// name a problem, so a clean document costs few allocations.
func scan(data []byte, text, dups *invalid.List) {
	var (
		path [8]step
		seen [16][]byte
	)
	s := scanner{data: data, text: text, dups: dups, path: path[:0], seen: seen[:0]}
	s.value()
}

type scanner struct {
	data []byte
	pos  int
	text *invalid.List
	dups *invalid.List

	path    []step   // from the root to the value at pos
	seen    [][]byte // the keys read so far of each object open at pos, innermost last
	keys    []byte   // the text of escaped keys, which seen and path point into; only grows
	scratch []byte   // the text of the string value being read, reused

	reported map[string]bool // the paths in dups, made at the first
}

// step is one level of a path: an object's key, or an array's index when
// index >= 0.
type step struct {
	key   []byte
	index int
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// where is the path of the value at pos in the house's form
// ("warmTransferConfig.holdMessage", "transferRoutes[0].to_number",
// "[2]"), as invalid.Join and invalid.Index write it.
func (s *scanner) where() string {
	var b []byte
	for _, st := range s.path {
		if st.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(st.index), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, st.key...)
	}
	return string(b)
}

// value reads the value at pos. The document is valid JSON, so the
// scanner need not check its syntax.
func (s *scanner) value() {
	s.skipSpace()
	switch s.data[s.pos] {
	case '{':
		s.object()
	case '[':
		s.array()
	case '"':
		text, decoded, problem := s.str(s.scratch[:0])
		if decoded {
			s.scratch = text
		}
		if problem != "" {
			s.text.Add(nameOr(s.where()), "%s", problem)
		}
	default: // number, true, false, null
		for s.pos < len(s.data) && !strings.ContainsRune(",]} \t\n\r", rune(s.data[s.pos])) {
			s.pos++
		}
	}
}

func (s *scanner) object() {
	s.pos++ // '{'
	s.skipSpace()
	if s.data[s.pos] == '}' {
		s.pos++
		return
	}
	keys := s.openKeys()
	for {
		s.skipSpace()
		key, problem := s.key()
		s.path = append(s.path, step{key: key, index: -1})
		if problem != "" {
			// Written out as sent, it may equal another key's text, so it
			// is left out of the duplicate check: it is refused anyway.
			s.text.Add(s.where(), "%s", invalid.KeyProblem(problem))
		} else if keys.repeated(s, key) {
			s.duplicate()
		}
		s.skipSpace()
		s.pos++ // ':'
		s.value()
		s.path = s.path[:len(s.path)-1]
		s.skipSpace()
		c := s.data[s.pos]
		s.pos++
		if c == '}' {
			s.seen = s.seen[:keys.base]
			return
		}
	}
}

func (s *scanner) array() {
	s.pos++ // '['
	s.skipSpace()
	if s.data[s.pos] == ']' {
		s.pos++
		return
	}
	s.path = append(s.path, step{index: 0})
	at := len(s.path) - 1
	for {
		s.value()
		s.skipSpace()
		c := s.data[s.pos]
		s.pos++
		if c == ']' {
			s.path = s.path[:at]
			return
		}
		s.path[at].index++
	}
}

// key reads the key at pos: its text, a slice of the document when it was
// sent plain, else decoded into s.keys.
func (s *scanner) key() (text []byte, problem string) {
	mark := len(s.keys)
	text, decoded, problem := s.str(s.keys)
	if decoded {
		s.keys = text
		text = text[mark:len(text):len(text)]
	}
	return text, problem
}
