// Package invalid describes input that breaks a rule: a list of fields, each
// with what is wrong with it, so one answer can name every broken field at
// once. It also holds the checks shared by several resources (E.164 numbers,
// URLs, time zones, language tags, lengths).
package invalid

import (
	"fmt"
	"strings"
)

// Field is one broken field. Name is the JSON name, dotted for nested keys
// and indexed for array items: "warmTransferConfig.holdMessage",
// "transferRoutes[0].to_number"; query parameters go by their own name.
type Field struct {
	Name    string `json:"field"`
	Message string `json:"message"`
	// Line is the line of an uploaded file (CSV) the field is on, the
	// header being line 1; 0 for a JSON body.
	Line int `json:"line,omitempty"`
}

// Error is input that breaks one or more rules.
type Error struct {
	Fields []Field
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Name + ": " + f.Message
		if f.Line > 0 {
			parts[i] = fmt.Sprintf("line %d: %s", f.Line, parts[i])
		}
	}
	return strings.Join(parts, "; ")
}

// List collects broken fields while a request is checked.
type List struct {
	fields []Field
}

// Add records that field breaks a rule.
func (l *List) Add(field, format string, args ...any) {
	l.fields = append(l.fields, Field{Name: field, Message: fmt.Sprintf(format, args...)})
}

// AddLine records that field, on line of an uploaded file, breaks a rule.
func (l *List) AddLine(line int, field, format string, args ...any) {
	l.fields = append(l.fields, Field{Name: field, Message: fmt.Sprintf(format, args...), Line: line})
}

// Len is how many broken fields are recorded.
func (l *List) Len() int { return len(l.fields) }

// Has reports whether field is already recorded as broken, so later checks
// that depend on it can be skipped.
func (l *List) Has(field string) bool {
	for _, f := range l.fields {
		if f.Name == field {
			return true
		}
	}
	return false
}

// Empty reports whether nothing was recorded.
func (l *List) Empty() bool { return len(l.fields) == 0 }

// Err is nil when nothing was recorded, else an *Error.
func (l *List) Err() error {
	if len(l.fields) == 0 {
		return nil
	}
	return &Error{Fields: l.fields}
}

// One returns an error naming a single field.
func One(field, format string, args ...any) error {
	var l List
	l.Add(field, format, args...)
	return l.Err()
}

// Join is a field path: Join("a", "b") is "a.b"; an empty prefix leaves name.
func Join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// Index is an array item's path: Index("ids", 3) is "ids[3]".
func Index(prefix string, i int) string {
	return fmt.Sprintf("%s[%d]", prefix, i)
}

// Conflict is a request that contradicts the current state (409). Its
// Message is safe to show the caller.
type Conflict struct {
	Message string
}

func (c *Conflict) Error() string { return c.Message }
