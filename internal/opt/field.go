// Package opt decodes JSON request bodies strictly and keeps what a partial
// update needs: whether each key was present, and whether it was null.
//
// A request type is a struct of Field[T] values with json tags. Decode
// refuses unknown keys at every depth of a typed object (nested structs and
// slices of structs), accepts anything inside free-form ones (maps and
// interfaces), and reports every key of the wrong JSON type at once, each
// under its dotted path ("warmTransferConfig.holdMessage",
// "transferRoutes[0].to_number"). Before any of that it refuses, at any
// depth and in keys too, text that no store may hold: a NUL, invalid UTF-8
// or a lone surrogate (text.go).
package opt

import "encoding/json"

// Field is one optional request value. Set means the key was present; Null
// means it was present as null; V holds the value otherwise.
type Field[T any] struct {
	Set  bool
	Null bool
	V    T
}

// Value returns a field holding v, as if decoded from a request.
func Value[T any](v T) Field[T] { return Field[T]{Set: true, V: v} }

// Present reports whether the key was given with a non-null value.
func (f Field[T]) Present() bool { return f.Set && !f.Null }

// Ptr returns a pointer to the value when present, nil otherwise: the shape
// in which the model keeps optional values.
func (f Field[T]) Ptr() *T {
	if !f.Present() {
		return nil
	}
	v := f.V
	return &v
}

// MarshalJSON writes the value, or null when absent, so request structs can
// be echoed in tests and logs.
func (f Field[T]) MarshalJSON() ([]byte, error) {
	if !f.Present() {
		return []byte("null"), nil
	}
	return json.Marshal(f.V)
}

func (f *Field[T]) fieldValue() any { return &f.V }
func (f *Field[T]) markSet(null bool) {
	f.Set = true
	f.Null = null
}

// optional is how Decode recognises a Field of any T.
type optional interface {
	fieldValue() any
	markSet(null bool)
}
