package web

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley-voice/parley/internal/invalid"
	"github.com/parley-voice/parley/internal/opt"
)

// formReader reads a resource form into a service's partial-update input:
// creating, a blank input is left out (the default applies); editing, a
// blank input clears its field. Problems the form alone can tell (bad
// characters, a number that is not one) are gathered under the input's
// name; the service checks everything else.
type formReader struct {
	form     url.Values
	creating bool
	problems invalid.List
	// values are the inputs as submitted, to show the form again; secrets
	// are never kept.
	values map[string]string
}

func newFormReader(form url.Values, creating bool) *formReader {
	return &formReader{form: form, creating: creating, values: map[string]string{}}
}

func (fr *formReader) raw(name string) (string, bool) {
	v := fr.form.Get(name)
	fr.values[name] = v
	if p := invalid.Text(v); p != "" {
		fr.problems.Add(name, "%s", p)
		return "", false
	}
	return strings.TrimSpace(v), true
}

// blank is an input left empty: out of a new resource, cleared on edit.
func blank[T any](creating bool) opt.Field[T] {
	if creating {
		return opt.Field[T]{}
	}
	return opt.Field[T]{Set: true, Null: true}
}

// jsonObject reads a textarea holding a JSON object, refused with refusal
// when it holds anything else, a key twice in one of its objects (as the
// API refuses it), or escapes (such as \u0000) that decode into text no
// store keeps.
func (fr *formReader) jsonObject(name, refusal string) opt.Field[map[string]any] {
	v, ok := fr.raw(name)
	if !ok {
		return opt.Field[map[string]any]{}
	}
	if v == "" {
		return blank[map[string]any](fr.creating)
	}
	var obj map[string]any
	if json.Unmarshal([]byte(v), &obj) != nil || obj == nil {
		fr.problems.Add(name, "%s", refusal)
		return opt.Field[map[string]any]{}
	}
	var dup *opt.DecodeError
	if errors.As(opt.CheckDuplicateKeys([]byte(v)), &dup) {
		for _, f := range dup.Fields {
			fr.problems.Add(name, "%s: %s", f.Name, f.Message)
		}
		return opt.Field[map[string]any]{}
	}
	var bad *invalid.Error
	if errors.As(opt.CheckText([]byte(v)), &bad) {
		for _, f := range bad.Fields {
			fr.problems.Add(name, "%s: %s", f.Name, f.Message)
		}
		return opt.Field[map[string]any]{}
	}
	return opt.Value(obj)
}

func (fr *formReader) text(name string) opt.Field[string] {
	v, ok := fr.raw(name)
	if !ok {
		return opt.Field[string]{}
	}
	if v == "" {
		return blank[string](fr.creating)
	}
	return opt.Value(v)
}

// required is a text the service refuses to clear: blank is sent as
// empty so the service says so.
func (fr *formReader) required(name string) opt.Field[string] {
	v, ok := fr.raw(name)
	if !ok || (v == "" && fr.creating) {
		return opt.Field[string]{}
	}
	return opt.Value(v)
}

// number reads a whole number; blank is left out when keep (the field
// cannot be cleared), else it follows blank.
func (fr *formReader) number(name string, keep bool) opt.Field[int] {
	v, ok := fr.raw(name)
	switch {
	case !ok:
		return opt.Field[int]{}
	case v == "" && keep:
		return opt.Field[int]{}
	case v == "":
		return blank[int](fr.creating)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		fr.problems.Add(name, "must be a whole number")
		return opt.Field[int]{}
	}
	return opt.Value(n)
}

// decimal reads a number; blank follows blank (the field is cleared).
func (fr *formReader) decimal(name string) opt.Field[float64] {
	v, ok := fr.raw(name)
	switch {
	case !ok:
		return opt.Field[float64]{}
	case v == "":
		return blank[float64](fr.creating)
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		fr.problems.Add(name, "must be a number")
		return opt.Field[float64]{}
	}
	return opt.Value(x)
}

// secret is a write-only input: blank keeps what is stored; it is never
// shown again, not even on a refused form.
func (fr *formReader) secret(name string) opt.Field[string] {
	v := fr.form.Get(name)
	if p := invalid.Text(v); p != "" {
		fr.problems.Add(name, "%s", p)
		return opt.Field[string]{}
	}
	if v == "" {
		return opt.Field[string]{}
	}
	return opt.Value(v)
}

// checked is a checkbox.
func (fr *formReader) checked(name string) bool {
	on := fr.form.Get(name) != ""
	if on {
		fr.values[name] = "on"
	}
	return on
}

// lines reads a textarea of one item a line.
func (fr *formReader) lines(name string) opt.Field[[]string] {
	v, ok := fr.raw(name)
	if !ok {
		return opt.Field[[]string]{}
	}
	out := []string{}
	for _, line := range strings.Split(v, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	if len(out) == 0 && fr.creating {
		return opt.Field[[]string]{}
	}
	return opt.Value(out)
}

func (fr *formReader) err() error { return fr.problems.Err() }

// refusal is a service's refusal of a form, as the form shows it: errors
// by input and a message above the form. ok is false for any other error.
func refusal(err error) (errs fieldErrors, message string, ok bool) {
	var (
		bad      *invalid.Error
		decode   *opt.DecodeError
		conflict *invalid.Conflict
	)
	switch {
	case errors.As(err, &bad):
		return errorsByPath(bad.Fields), "", true
	case errors.As(err, &decode):
		return errorsByPath(decode.Fields), "", true
	case errors.As(err, &conflict):
		return fieldErrors{}, conflict.Message, true
	}
	return nil, "", false
}

// errorsByPath files errors under inputs named by the API's full field
// path ("registration.registrar"); a list element's error goes to the
// list's input ("inboundAllowedCidrs[2]" to "inboundAllowedCidrs").
func errorsByPath(fields []invalid.Field) fieldErrors {
	out := fieldErrors{}
	for _, f := range fields {
		name, msg := f.Name, f.Message
		if i := strings.IndexByte(name, '['); i > 0 {
			name, msg = name[:i], f.Name+": "+f.Message
		}
		out[name] = append(out[name], msg)
	}
	return out
}

// formState is a resource form as shown: its inputs and their errors.
type formState struct {
	Values  map[string]string
	Errors  fieldErrors
	Message string
}

// fieldsOf is a form's inputs, by name: each of fields drawn with st's
// values and errors, a select offering choices.
func fieldsOf(st formState, fields []agentField, choices ...option) map[string]fieldView {
	out := map[string]fieldView{}
	for _, f := range fields {
		out[f.Name] = st.field(f, choices...)
	}
	return out
}

// field is f as the form draws it, with choices for a select.
func (st formState) field(f agentField, choices ...option) fieldView {
	d := agentFormData{Values: formValues{Text: st.Values}, Errors: st.Errors, Choices: map[kind][]option{f.Kind: choices}}
	return d.Field(f)
}
