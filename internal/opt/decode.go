package opt

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/parley-voice/parley/internal/invalid"
)

// DecodeError is a body that is not JSON, or whose keys are repeated,
// unknown or of the wrong JSON type. It is distinct from *invalid.Error, which is about
// values that break a rule, because the API answers them with different codes.
type DecodeError struct {
	Fields []invalid.Field
}

func (e *DecodeError) Error() string { return (&invalid.Error{Fields: e.Fields}).Error() }

func decodeError(field, message string) error {
	return &DecodeError{Fields: []invalid.Field{{Name: field, Message: message}}}
}

// Decode reads a JSON object into dst, a pointer to a struct, strictly.
// A body that is not JSON, has a key twice in one object at any depth
// (CheckDuplicateKeys), or is of the wrong shape, is a *DecodeError; text
// Parley does not store (a NUL, invalid UTF-8 or a lone surrogate in any
// string or key, see invalid.Text) is an *invalid.Error naming each, and
// dst is left alone.
func Decode(data []byte, dst any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return decodeError("body", "must be a JSON object")
	}
	if !json.Valid(data) {
		return decodeError("body", "is not valid JSON")
	}
	var text, dups invalid.List
	if scan(data, &text, &dups); !dups.Empty() {
		return decodeErr(&dups)
	}
	if !text.Empty() {
		return text.Err()
	}
	var l invalid.List
	decodeValue(data, reflect.ValueOf(dst).Elem(), "", &l)
	return decodeErr(&l)
}

var optionalType = reflect.TypeFor[optional]()

// decodeValue stores raw (valid JSON) into v, recording type mismatches
// under path.
func decodeValue(raw json.RawMessage, v reflect.Value, path string, l *invalid.List) {
	if v.CanAddr() && v.Addr().Type().Implements(optionalType) {
		o := v.Addr().Interface().(optional)
		null := isNull(raw)
		o.markSet(null)
		if !null {
			decodeValue(raw, reflect.ValueOf(o.fieldValue()).Elem(), path, l)
		}
		return
	}
	switch {
	case v.Kind() == reflect.Struct:
		decodeObject(raw, v, path, l)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct:
		if isNull(raw) {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		decodeObject(raw, p.Elem(), path, l)
		v.Set(p)
	case v.Kind() == reflect.Slice && typedObject(v.Type().Elem()):
		decodeArray(raw, v, path, l)
	default:
		if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
			l.Add(nameOr(path), "must be %s", describe(v.Type()))
		}
	}
}

func decodeObject(raw json.RawMessage, v reflect.Value, path string, l *invalid.List) {
	var members map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
		l.Add(nameOr(path), "must be an object")
		return
	}
	fields := fieldsOf(v.Type())
	for _, key := range sortedKeys(members) {
		if _, ok := fields.byName[key]; !ok {
			l.Add(invalid.Join(path, key), "is not a known field")
		}
	}
	for _, f := range fields.list {
		if m, ok := members[f.name]; ok {
			decodeValue(m, v.Field(f.index), invalid.Join(path, f.name), l)
		}
	}
}

func decodeArray(raw json.RawMessage, v reflect.Value, path string, l *invalid.List) {
	if isNull(raw) {
		v.SetZero()
		return
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		l.Add(nameOr(path), "must be an array")
		return
	}
	out := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, item := range items {
		decodeValue(item, out.Index(i), invalid.Index(path, i), l)
	}
	v.Set(out)
}

// typedObject reports whether t is a struct whose keys are checked (or a
// pointer to one), as opposed to a free-form value.
func typedObject(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(optionalType)
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func nameOr(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describe(t.Elem()), "a "), "an ") + "s"
	case reflect.Pointer:
		return describe(t.Elem())
	}
	return "a JSON value"
}

type structField struct {
	name  string
	index int
}

type structFields struct {
	list   []structField
	byName map[string]int
}

var fieldCache sync.Map // reflect.Type → structFields

func fieldsOf(t reflect.Type) structFields {
	if c, ok := fieldCache.Load(t); ok {
		return c.(structFields)
	}
	fs := structFields{byName: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fs.byName[name] = len(fs.list)
		fs.list = append(fs.list, structField{name: name, index: i})
	}
	fieldCache.Store(t, fs)
	return fs
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
