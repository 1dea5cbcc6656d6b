package opt

import (
	"bytes"
	"encoding/json"

	"github.com/parley-voice/parley/internal/invalid"
)

// duplicateKey is the message of a key repeated within one object.
// encoding/json keeps the last of them, a proxy or an audit log may read
// the first: the two would disagree about what a request said.
const duplicateKey = "duplicate key: appears more than once in its object"

// CheckDuplicateKeys is nil when no object of data, valid JSON, has a key
// twice (compared as decoded: "a" and "\u0061" are one key), else a
// *DecodeError naming each repeated key by its path ("name",
// "warmTransferConfig.holdMessage", "variables.x", "[0].id"). For JSON
// that Parley reads other than as a request body (Decode checks those):
// an answer from a customer's server, a model's tool arguments, a form's
// JSON text. Data that is not JSON is nil: the caller's decoding says so.
func CheckDuplicateKeys(data []byte) error {
	if !json.Valid(data) {
		return nil
	}
	var text, dups invalid.List
	scan(data, &text, &dups)
	return decodeErr(&dups)
}

// Unmarshal is json.Unmarshal refusing, before v is touched, a key
// repeated within one object (a *DecodeError, see CheckDuplicateKeys).
// For JSON from outside that is not a request body: an answer from a
// customer's server, a model's tool arguments or structured answer.
func Unmarshal(data []byte, v any) error {
	if err := CheckDuplicateKeys(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// decodeErr is nil when l is empty, else a *DecodeError of its fields.
func decodeErr(l *invalid.List) error {
	if l.Empty() {
		return nil
	}
	return &DecodeError{Fields: l.Err().(*invalid.Error).Fields}
}

// manyKeys is the size past which an object's keys are looked up in a map
// rather than by comparing each: objects are small, but a 1 MiB body may
// hold one of tens of thousands of keys.
const manyKeys = 16

// keySet is the keys read so far of one object: s.seen[base:], and past
// manyKeys a map of them.
type keySet struct {
	base  int
	index map[string]struct{}
}

// duplicate adds the key at pos to dups, once per path however often it
// is repeated (a map, not dups.Has: a body may repeat thousands of keys).
func (s *scanner) duplicate() {
	at := s.where()
	if s.reported[at] {
		return
	}
	if s.reported == nil {
		s.reported = map[string]bool{}
	}
	s.reported[at] = true
	s.dups.Add(at, "%s", duplicateKey)
}

func (s *scanner) openKeys() keySet { return keySet{base: len(s.seen)} }

// repeated records key as read in the object, and reports whether it was
// read there before. The objects nested in a value close before the next
// key is read, so the object's own keys are always s.seen[base:].
func (k *keySet) repeated(s *scanner, key []byte) bool {
	if k.index != nil {
		if _, ok := k.index[string(key)]; ok {
			return true
		}
		k.index[string(key)] = struct{}{}
		return false
	}
	for _, seen := range s.seen[k.base:] {
		if bytes.Equal(seen, key) {
			return true
		}
	}
	s.seen = append(s.seen, key)
	if len(s.seen)-k.base > manyKeys {
		k.index = make(map[string]struct{}, 2*manyKeys)
		for _, seen := range s.seen[k.base:] {
			k.index[string(seen)] = struct{}{}
		}
	}
	return false
}
