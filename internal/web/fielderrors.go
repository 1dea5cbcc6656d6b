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
		top, msg := topField(f.Name), f.Message
		if top != f.Name {
			msg = f.Name + ": " + f.Message
		}
		out[top] = append(out[top], msg)
	}
	return out
}

// topField is the form input a field path belongs to:
// "transferRoutes[0].to_number" belongs to "transferRoutes".
func topField(path string) string {
	if i := strings.IndexAny(path, ".["); i > 0 {
		return path[:i]
	}
	return path
}
