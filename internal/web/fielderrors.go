package web

import (
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
)

// fieldErrors are a form's broken fields: the messages shown next to each
// input, keyed by the input's name.
type fieldErrors map[string][]string

// errorsByField files the rules a service reports under the form input
// they belong to: a nested path ("transferRoutes[0].to_number") goes to
// its top-level input, with the path kept in the message.
func errorsByField(fields []invalid.Field) fieldErrors {
	out := fieldErrors{}
	for _, f := range fields {
		top, msg := f.Name, f.Message
		if i := strings.IndexAny(f.Name, ".["); i > 0 {
			top, msg = f.Name[:i], f.Name+": "+f.Message
		}
		out[top] = append(out[top], msg)
	}
	return out
}
